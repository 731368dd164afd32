// @ts-check
/**
 * timeline/colours.js — the Timeline tab's colours (no DOM; tested by
 * tests/web/timescale.test.mjs and tests/web/timeline_colours.test.mjs).
 *
 * The canvas cannot read CSS classes, so the fixed colours of the lanes,
 * ruler, minimap and overlay live here (COL). A slice's fill comes from a
 * stable FNV-1a hash of its name within a palette per category (operator,
 * runtime, kernel, memory, communication, python, step): the same name
 * always gets the same colour, across zooms, ranks and reloads. Merged
 * items (one per pixel bucket, standing for n slices) get a darker shade
 * of the same hue.
 *
 * sliceColours() and lowerName() are called for every item of every frame,
 * so both are cached; the caches are cleared whole when they grow past a
 * bound (a trace may hold millions of distinct names).
 */

/** Fixed colours of the light theme; the dark one overrides them with the
 * stylesheet's --tb-tl-* properties (useThemeColours). sliceText is for
 * labels on the slices' own light fills, in both themes; veil is the
 * translucent backing of text over the lanes. */
const LIGHT = Object.freeze({
    bg: '#ffffff',
    laneAlt: '#fafbfc',
    group: '#f0f2f5',
    line: '#e3e6ea',
    text: '#1d2127',
    muted: '#5c636d',
    stepA: 'rgba(31, 87, 195, 0.05)',
    stepLine: 'rgba(92, 99, 109, 0.35)',
    hover: '#1d2127',
    sel: '#1f57c3',
    flow: '#d0421b',
    area: 'rgba(31, 87, 195, 0.12)',
    areaEdge: '#1f57c3',
    view: 'rgba(31, 87, 195, 0.18)',
    counter: 'rgba(176, 122, 161, 0.35)',
    counterLine: '#8e5a84',
    busy: 'rgba(78, 121, 167, 0.75)',
    idle: 'rgba(208, 66, 27, 0.22)',
    idleMark: 'rgba(208, 66, 27, 0.75)',
    hit: '#e8a317',
    sliceText: '#1d2127',
    veil: 'rgba(255, 255, 255, 0.8)',
});

/** The colours in use: LIGHT, or LIGHT with the current theme's overrides. */
export const COL = { ...LIGHT };

/**
 * Sets COL for a theme.
 * @param {(defaults: typeof LIGHT, prefix: string) => typeof LIGHT} themed  theme.js themedColours
 */
export function useThemeColours(themed) {
    Object.assign(COL, themed(LIGHT, '--tb-tl-'));
}

/**
 * Palettes per category: [first hue, hue range, saturation %, lightness %].
 * @type {Record<string, [number, number, number, number]>}
 */
export const PALETTES = {
    op: [195, 80, 48, 70],
    runtime: [0, 28, 62, 70],
    kernel: [85, 90, 42, 64],
    memory: [38, 16, 78, 64],
    comm: [275, 35, 45, 70],
    python: [150, 30, 25, 74],
    step: [215, 1, 10, 82],
};

/**
 * FNV-1a hash of a string: the same name always gets the same colour.
 * @param {string} s
 * @returns {number}
 */
export function nameHash(s) {
    let x = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) {
        x ^= s.charCodeAt(i);
        x = Math.imul(x, 0x01000193);
    }
    return x >>> 0;
}

/**
 * The palette a slice's colour is taken from, by its name and lane kind.
 * @param {string} name
 * @param {string} kind "cpu" | "gpu"
 * @returns {string} a key of PALETTES
 */
export function sliceCategory(name, kind) {
    if (/^ProfilerStep#/.test(name)) return 'step';
    if (/nccl|gloo|all_?reduce|all_?gather|reduce_?scatter|broadcast|c10d::|alltoall/i.test(name)) return 'comm';
    if (/^(Memcpy|Memset|cudaMemcpy|cudaMemset)/i.test(name) || /memcpy|memset/i.test(name)) return 'memory';
    if (kind === 'gpu') return 'kernel';
    if (/^(cuda|cu[A-Z]|hip)/.test(name)) return 'runtime';
    if (/\.py\(|^<built-in|^torch\/|\.__next__|^pin_memory|^DataLoader/.test(name)) return 'python';
    return 'op';
}

/** @type {Map<string, [string, string]>} */
const colourCache = new Map();

/** @type {Map<string, string>} */
const lowerCache = new Map();

/**
 * A name in lower case (cached: search dims every non-matching slice each frame).
 * @param {string} s
 * @returns {string}
 */
export function lowerName(s) {
    let l = lowerCache.get(s);
    if (l === undefined) {
        l = s.toLowerCase();
        if (lowerCache.size > 50000) lowerCache.clear();
        lowerCache.set(s, l);
    }
    return l;
}

/**
 * Fill colours of a slice name: [normal, merged (darker)], CSS hsl() strings.
 * @param {string} name
 * @param {string} kind "cpu" | "gpu"
 * @returns {[string, string]} borrowed from the cache: do not modify
 */
export function sliceColours(name, kind) {
    const key = kind + '\u0000' + name;
    let c = colourCache.get(key);
    if (!c) {
        const [hue0, range, sat, light] = PALETTES[sliceCategory(name, kind)];
        const x = nameHash(name);
        const hue = (hue0 + (x % 997) / 997 * range) % 360;
        const l = light + ((x >>> 10) % 9) - 4;
        c = [`hsl(${hue.toFixed(1)} ${sat}% ${l}%)`, `hsl(${hue.toFixed(1)} ${sat}% ${Math.max(25, l - 20)}%)`];
        if (colourCache.size > 20000) colourCache.clear();
        colourCache.set(key, c);
    }
    return c;
}

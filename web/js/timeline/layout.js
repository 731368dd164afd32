// @ts-check
/**
 * timeline/layout.js — the Timeline tab's lanes: which rows are shown, in
 * what order, at what y (no DOM; tested by tests/web/timeline_layout.test.mjs).
 *
 * buildLayout() turns the tracks of /timeline/tracks into rows: pinned
 * track lanes first, fixed at the top (their own section, in track
 * order), then the scrolled section: a group row per CPU process (by pid)
 * and per GPU device, CPU before GPU, each followed by its thread or
 * stream lanes (by tid / stream) unless the group is collapsed (GPU groups
 * first with gpuFirst), then a
 * "Counters" group with one small area-chart row per counter. A stacked
 * view (opts.ranks) repeats that under a collapsible group row per rank,
 * the straggler's marked. Lanes of
 * tracks without slices are left out unless showEmpty; a group with no
 * lane left is left out. A lane is as tall as its deepest slice, or as
 * maxLevels depths when that is less (the deeper ones are folded); group
 * rows carry a summary (lanes and slices they hold) drawn when collapsed.
 *
 * A row's `y` is its top within its section: pinned rows from the top of
 * the lanes canvas, scrolled rows from the top of the scrolled content,
 * which appears below the pinned section moved up by scrollY. rowAt(),
 * laneTop() and hitTest() turn screen y (lanes canvas) into rows and back.
 *
 * Sizes are CSS pixels. A Layout is rebuilt whole on every change (pin,
 * collapse, empty lanes, a new rank): a run has at most a few hundred rows.
 */

import { plural } from '../format.js';
import * as T from '../timescale.js';

/** @typedef {import('../apitypes.js').TimelineTrack} TimelineTrack */
/** @typedef {import('../timescale.js').Viewport} Viewport */

/** Height of one depth of slices. */
export const SLICE_H = 18;
/** Space above and below the slices of a lane. */
export const LANE_PAD = 3;
/** Height of a group row. */
export const GROUP_H = 22;
/** Height of a counter row. */
export const COUNTER_H = 34;
/** Height of the time ruler, and of the steps strip below it. */
export const RULER_H = 24;
export const STEPS_H = 16;
/** The plot's header (ruler and steps) above the lanes. */
export const HEAD_H = RULER_H + STEPS_H;

/**
 * A row of the layout.
 * @typedef {object} Row
 * @property {'group' | 'track' | 'counter'} type
 * @property {string} key         group key ("cpu:<pid>", "gpu:<device>", "counters", "rank:<r>", the
 *                                last three under "rank:<r>:" when stacked), or "t<id>" / "c<id>"
 * @property {number} y           top within its section (pinned or scrolled)
 * @property {number} h
 * @property {boolean} pinned
 * @property {TimelineTrack} [track]
 * @property {{id: number, name: string, unit: string}} [counter]
 * @property {string} [label]     group: its name
 * @property {number} [count]     group: lanes (or counters) it holds, shown or collapsed
 * @property {number} [slices]    group: slices of those lanes
 * @property {'cpu' | 'gpu' | 'counters' | 'rank' | 'logs'} [kind]  group: what its lanes are (a rank: its groups)
 * @property {number} [rank]      rank group: its rank
 * @property {boolean} [straggler] rank group: the run's straggler (Ranks tab)
 * @property {boolean} [collapsed] group: its lanes are hidden
 * @property {number} [levels]    track: depths drawn (the rest folded away by LayoutOptions.maxLevels)
 */

/**
 * @typedef {object} Layout
 * @property {Row[]} pinned    pinned lanes, y from the top of the lanes
 * @property {Row[]} scroll    groups, lanes and counters, y within the scrolled content
 * @property {number} pinnedH  height of the pinned section
 * @property {number} contentH height of the scrolled content
 */

/**
 * @typedef {object} LayoutOptions
 * @property {Set<number>} pins        pinned track ids
 * @property {Set<string>} collapsed   collapsed group keys
 * @property {boolean} showEmpty       show lanes without slices
 * @property {boolean} [gpuFirst]      GPU groups before the CPU ones
 * @property {number} [maxLevels]      depths drawn per lane (0 or absent: all); deeper slices are folded
 * @property {{rank: number, straggler: boolean}[] | null} [ranks]  a stacked view: a group per rank, in this order
 * @property {{track: TimelineTrack, count: number, counters: {id: number, name: string, unit: string}[]} | null} [logs]
 *           the job log (timeline/loglane.js): a "Job log" group first, its lane of markers and a counter per numeric field
 */

/** A layout with no rows. */
export const EMPTY_LAYOUT = /** @type {Layout} */ (Object.freeze({ pinned: [], scroll: [], pinnedH: 0, contentH: 0 }));

/**
 * The lane group of a track: its GPU device, or its CPU process.
 * @param {TimelineTrack} t
 * @returns {string}
 */
export function groupKey(t) {
    const own = t.kind === 'gpu' ? `gpu:${t.device ?? t.pid}` : `cpu:${t.pid}`;
    return t.rank === undefined ? own : `${rankKey(t.rank)}:${own}`;
}

/**
 * "GPU 0 / stream 7", "python3 / thread 595 (python3)".
 * @param {TimelineTrack} t
 * @returns {string}
 */
export function laneTitle(t) {
    const owner = t.kind === 'gpu' ? `GPU ${t.device ?? t.pid}` : t.process || `pid ${t.pid}`;
    return `${t.rank === undefined ? '' : `rank ${t.rank} / `}${owner} / ${(t.name || '').trim() || 'track ' + t.id}`;
}

/**
 * Orders pids, tids and streams: numerically when both are numbers (or
 * numeric strings), numbers before text, else as text.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {number}
 */
export function idCompare(a, b) {
    const x = Number(a);
    const y = Number(b);
    const nx = a !== '' && a !== null && Number.isFinite(x);
    const ny = b !== '' && b !== null && Number.isFinite(y);
    if (nx && ny) return x - y;
    if (nx !== ny) return nx ? -1 : 1;
    return String(a ?? '').localeCompare(String(b ?? ''));
}

/**
 * Height of a track's lane: one SLICE_H per depth, padded.
 * @param {TimelineTrack} t
 * @param {number} [maxLevels] depths drawn at most (0: all)
 * @returns {number}
 */
export function laneHeight(t, maxLevels = 0) {
    return laneLevels(t, maxLevels) * SLICE_H + 2 * LANE_PAD;
}

/**
 * Depths of a track's lane that are drawn: all, or at most maxLevels (> 0).
 * @param {TimelineTrack} t
 * @param {number} [maxLevels]
 * @returns {number}
 */
export function laneLevels(t, maxLevels = 0) {
    const all = Math.max(0, t.max_depth) + 1;
    return maxLevels > 0 ? Math.min(all, maxLevels) : all;
}

/**
 * The rows of the lanes.
 * @param {TimelineTrack[]} tracks    in the API's order
 * @param {{id: number, name: string, unit: string}[]} counters
 * @param {LayoutOptions} opts
 * @returns {Layout} owned by the caller; rows borrow the tracks and counters
 */
export function buildLayout(tracks, counters, opts) {
    const { pins, collapsed, showEmpty, gpuFirst = false, maxLevels = 0, ranks = null, logs = null } = opts;
    /** @type {Row[]} */
    const pinned = [];
    /** @type {Row[]} */
    const scroll = [];
    let py = 0;
    let sy = 0;
    for (const t of tracks) {
        if (!pins.has(t.id)) continue;
        const hgt = laneHeight(t, maxLevels);
        pinned.push({ type: 'track', key: 't' + t.id, y: py, h: hgt, pinned: true, track: t, levels: laneLevels(t, maxLevels) });
        py += hgt;
    }
    /**
     * The groups, lanes and counters of one rank (or of the only one).
     * @param {TimelineTrack[]} ts
     * @param {{id: number, name: string, unit: string}[]} cs
     * @param {string} prefix  the rank's key prefix ("" when not stacked)
     */
    function section(ts, cs, prefix) {
        /** @type {Map<string, {key: string, label: string, gpu: boolean, id: string | number, tracks: TimelineTrack[]}>} */
        const groups = new Map();
        for (const t of ts) {
            const gpu = t.kind === 'gpu';
            const key = groupKey(t);
            let g = groups.get(key);
            if (!g) {
                const label = gpu ? `GPU ${t.device ?? t.pid}` : t.process ? `${t.process} (pid ${t.pid})` : `process ${t.pid}`;
                groups.set(key, (g = { key, label, gpu, id: gpu ? (t.device ?? t.pid) : t.pid, tracks: [] }));
            }
            g.tracks.push(t);
        }
        const gpuOrder = gpuFirst ? -1 : 1;
        const sorted = [...groups.values()].sort((a, b) => gpuOrder * (Number(a.gpu) - Number(b.gpu)) || idCompare(a.id, b.id));
        for (const g of sorted) {
            const shown = g.tracks
                .filter((t) => !pins.has(t.id) && (showEmpty || t.nslices > 0))
                .sort((a, b) => (a.kind === 'gpu' ? idCompare(a.stream ?? a.tid, b.stream ?? b.tid) : idCompare(a.tid, b.tid)));
            if (!shown.length) continue;
            const closed = collapsed.has(g.key);
            const slices = shown.reduce((n, t) => n + (t.nslices || 0), 0);
            scroll.push({ type: 'group', key: g.key, y: sy, h: GROUP_H, pinned: false, label: g.label, count: shown.length, slices, kind: g.gpu ? 'gpu' : 'cpu', collapsed: closed });
            sy += GROUP_H;
            if (closed) continue;
            for (const t of shown) {
                const hgt = laneHeight(t, maxLevels);
                scroll.push({ type: 'track', key: 't' + t.id, y: sy, h: hgt, pinned: false, track: t, levels: laneLevels(t, maxLevels) });
                sy += hgt;
            }
        }
        if (cs.length) {
            const key = prefix + 'counters';
            const closed = collapsed.has(key);
            scroll.push({ type: 'group', key, y: sy, h: GROUP_H, pinned: false, label: 'Counters', count: cs.length, slices: 0, kind: 'counters', collapsed: closed });
            sy += GROUP_H;
            if (!closed) {
                for (const c of cs) {
                    scroll.push({ type: 'counter', key: 'c' + c.id, y: sy, h: COUNTER_H, pinned: false, counter: c });
                    sy += COUNTER_H;
                }
            }
        }
    }
    if (logs) {
        const closed = collapsed.has('logs');
        scroll.push({ type: 'group', key: 'logs', y: sy, h: GROUP_H, pinned: false, label: 'Job log', count: logs.count, slices: 0, kind: 'logs', collapsed: closed });
        sy += GROUP_H;
        if (!closed) {
            const hgt = laneHeight(logs.track, 1);
            scroll.push({ type: 'track', key: 't' + logs.track.id, y: sy, h: hgt, pinned: false, track: logs.track, levels: 1 });
            sy += hgt;
            for (const c of logs.counters) {
                scroll.push({ type: 'counter', key: 'c' + c.id, y: sy, h: COUNTER_H, pinned: false, counter: c });
                sy += COUNTER_H;
            }
        }
    }
    if (!ranks) {
        section(tracks, counters, '');
        return { pinned, scroll, pinnedH: py, contentH: sy };
    }
    for (const rk of ranks) {
        const ts = tracks.filter((t) => t.rank === rk.rank);
        const cs = counters.filter((c) => /** @type {{rank?: number}} */ (c).rank === rk.rank);
        const key = rankKey(rk.rank);
        const closed = collapsed.has(key);
        const lanes = ts.filter((t) => !pins.has(t.id) && (showEmpty || t.nslices > 0));
        scroll.push({
            type: 'group', key, y: sy, h: GROUP_H, pinned: false, label: `Rank ${rk.rank}${rk.straggler ? ' · straggler' : ''}`,
            count: lanes.length, slices: lanes.reduce((n, t) => n + (t.nslices || 0), 0), kind: 'rank', collapsed: closed, rank: rk.rank, straggler: rk.straggler,
        });
        sy += GROUP_H;
        if (!closed) section(ts, cs, key + ':');
    }
    return { pinned, scroll, pinnedH: py, contentH: sy };
}

/**
 * The group key of a rank's lane group on a stacked view.
 * @param {number} rank
 * @returns {string}
 */
export function rankKey(rank) {
    return `rank:${rank}`;
}

/**
 * What a group row holds, in words: "4 threads · 1,234 slices",
 * "2 streams · 96 slices", "3 counters".
 * @param {Row} r a group row
 * @returns {string}
 */
export function groupSummary(r) {
    const n = r.count || 0;
    if (r.kind === 'counters') return plural(n, 'counter');
    if (r.kind === 'logs') return plural(n, 'log line');
    if (r.kind === 'rank') return `${plural(n, 'lane')} · ${plural(r.slices || 0, 'slice')}`;
    return `${plural(n, r.kind === 'gpu' ? 'stream' : 'thread')} · ${plural(r.slices || 0, 'slice')}`;
}

/**
 * Track ids of the server's lanes shown (pinned, and in expanded groups), in row order.
 * @param {Layout} l
 * @returns {number[]}
 */
export function shownTrackIds(l) {
    /** @type {number[]} */
    const out = [];
    // the job log's lane (negative id) is not the server's
    for (const r of [...l.pinned, ...l.scroll]) if (r.type === 'track' && r.track && r.track.id >= 0) out.push(r.track.id);
    return out;
}

/**
 * Largest scrollY for lanes `lanesH` pixels tall.
 * @param {Layout} l
 * @param {number} lanesH
 * @returns {number}
 */
export function maxScroll(l, lanesH) {
    return Math.max(0, l.contentH - (lanesH - l.pinnedH));
}

/**
 * scrollY kept within [0, maxScroll].
 * @param {Layout} l
 * @param {number} lanesH
 * @param {number} scrollY
 * @returns {number}
 */
export function clampScroll(l, lanesH, scrollY) {
    return Math.max(0, Math.min(maxScroll(l, lanesH), scrollY));
}

/**
 * The row at a y of the lanes canvas, and that row's top on screen.
 * @param {Layout} l
 * @param {number} scrollY
 * @param {number} y
 * @returns {{row: Row, top: number} | null}
 */
export function rowAt(l, scrollY, y) {
    if (y < 0) return null;
    if (y < l.pinnedH) {
        const r = l.pinned.find((p) => y >= p.y && y < p.y + p.h);
        return r ? { row: r, top: r.y } : null;
    }
    const sy = y - l.pinnedH + scrollY;
    const r = l.scroll.find((p) => sy >= p.y && sy < p.y + p.h);
    return r ? { row: r, top: r.y + l.pinnedH - scrollY } : null;
}

/**
 * Screen top of a track's lane (its group's row when collapsed, `lane`
 * false); null if neither is shown.
 * @param {Layout} l
 * @param {number} scrollY
 * @param {number} id track id
 * @param {Map<number, TimelineTrack>} trackById
 * @returns {{top: number, h: number, lane: boolean, levels?: number} | null}
 */
export function laneTop(l, scrollY, id, trackById) {
    const p = l.pinned.find((r) => r.track && r.track.id === id);
    if (p) return { top: p.y, h: p.h, lane: true, levels: p.levels };
    const s = l.scroll.find((r) => r.track && r.track.id === id);
    if (s) return { top: s.y + l.pinnedH - scrollY, h: s.h, lane: true, levels: s.levels };
    const t = trackById.get(id);
    if (!t) return null;
    const key = groupKey(t);
    const rk = t.rank === undefined ? null : rankKey(t.rank);
    const g = l.scroll.find((r) => r.type === 'group' && r.key === key) || (rk ? l.scroll.find((r) => r.type === 'group' && r.key === rk) : undefined);
    return g ? { top: g.y + l.pinnedH - scrollY, h: g.h, lane: false } : null;
}

/**
 * Screen y of a slice's row in a lane placed by laneTop(): its depth, or
 * the last depth drawn when it is folded away; a collapsed group's row.
 * @param {{top: number, lane: boolean, levels?: number}} lt
 * @param {number} depth
 * @returns {number}
 */
export function sliceY(lt, depth) {
    return lt.lane ? depthY(lt.top, Math.min(depth, (lt.levels ?? depth + 1) - 1)) : lt.top + 2;
}

/**
 * Screen y of the top of depth `depth` in a lane whose top is `top`.
 * @param {number} top
 * @param {number} depth
 * @returns {number}
 */
export function depthY(top, depth) {
    return top + LANE_PAD + depth * SLICE_H;
}

/**
 * A hovered or clicked item: track, depth, index in that depth's columns,
 * and the point (plot coordinates).
 * @typedef {{track: number, depth: number, i: number, x: number, y: number}} Hit
 */

/**
 * The item under a point of the plot (CSS px, plot coordinates: the
 * header is above the lanes), within two pixels in time.
 * @param {Layout} l
 * @param {number} scrollY
 * @param {Map<number, {ts: number[], dur: number[]}[]>} items   per track, per depth
 * @param {Viewport} view
 * @param {number} x
 * @param {number} y
 * @returns {Hit | null}
 */
export function hitTest(l, scrollY, items, view, x, y) {
    const at = rowAt(l, scrollY, y - HEAD_H);
    if (!at || at.row.type !== 'track' || !at.row.track) return null;
    const id = at.row.track.id;
    const depth = Math.floor((y - HEAD_H - at.top - LANE_PAD) / SLICE_H);
    if (depth >= (at.row.levels ?? Infinity)) return null;
    const it = (items.get(id) || [])[depth];
    if (!it) return null;
    const i = T.hitIndex(it.ts, it.dur, T.pxToTime(view, x), T.usPerPx(view) * 2);
    return i < 0 ? null : { track: id, depth, i, x, y };
}

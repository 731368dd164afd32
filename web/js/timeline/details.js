// @ts-check
/**
 * timeline/details.js — the Timeline tab's "Selected slice" panel: empty,
 * loading, failed, or the details of /timeline/slice (category, lane,
 * times, depth, what launched it, what it launched, its parents, its
 * flows and its arguments).
 *
 * Stateless: each function replaces the panel's content whole. Buttons
 * call back into the view (DetailsActions): a slice link selects and
 * reveals that slice, a flow is followed to its other end. Every trace
 * string (names, categories, argument keys and values) reaches the page
 * as text; objects among the arguments are shown as JSON.
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, h, replace } from '../dom.js';
import { DASH, formatMicros, formatOffset } from '../format.js';
import { argText, formatCounter } from './data.js';

/** @typedef {import('../apitypes.js').TimelineSlice} TimelineSlice */
/** @typedef {import('../apitypes.js').SliceLink} SliceLink */
/** @typedef {TimelineSlice['flows'][number]} Flow */

/**
 * What the panel's buttons do, and what it needs to name things.
 * @typedef {object} DetailsActions
 * @property {number} origin                     time shown as 0
 * @property {(track: number) => string} trackName  "GPU 0 / stream 7"
 * @property {(l: SliceLink) => void} select     select and reveal a linked slice
 * @property {(f: Flow, d: TimelineSlice) => void} follow  follow a flow
 * @property {() => void} fit                    fit the view to the selection
 * @property {() => void} clear                  clear the selection
 * @property {(d: TimelineSlice) => void} [flame]  show the flame graph of this slice (the area panel)
 */

const TITLE = 'Selected slice';

/** @param {HTMLElement} box */
export function showDetailsEmpty(box) {
    replace(box, h('h2', { class: C.sectionTitle }, TITLE), h('p', { class: C.muted }, 'Click a slice to see its details, its parents and what it launched.'));
}

/**
 * @param {HTMLElement} box
 * @param {{name?: string}} ref the slice being loaded (its name when known)
 */
export function showDetailsLoading(box, ref) {
    replace(
        box,
        h('h2', { class: C.sectionTitle }, TITLE),
        ref.name ? h('p', { class: [C.mono, C.tlSliceName] }, ref.name) : null,
        h('p', { class: [C.muted, C.loading] }, 'Loading…'),
    );
}

/**
 * @param {HTMLElement} box
 * @param {unknown} e what /timeline/slice threw (a 404 is a warning: the slice is gone)
 */
export function showDetailsError(box, e) {
    replace(
        box,
        h('h2', { class: C.sectionTitle }, TITLE),
        alertBox(e instanceof api.ApiError && e.status === 404 ? 'warn' : 'error', 'Could not load this slice', h('p', null, e instanceof Error ? e.message : String(e))),
    );
}

/**
 * The head of a timeline side panel (this one and aggregate.js's): its
 * title, then "Zoom to it" and "Clear" buttons.
 * @param {string} title
 * @param {() => void} zoom
 * @param {() => void} clear
 * @param {{zoom?: string, clear?: string}} [tips] the buttons' tooltips
 * @returns {HTMLElement}
 */
export function detailsHead(title, zoom, clear, tips = {}) {
    return h(
        'div',
        { class: C.tlDetailsHead },
        h('h2', { class: C.sectionTitle }, title),
        h('span', { class: C.spacer }),
        h('button', { type: 'button', class: [C.btn, C.btnSm], title: tips.zoom || null, on: { click: zoom } }, 'Zoom to it'),
        h('button', { type: 'button', class: [C.btn, C.btnSm], title: tips.clear || null, on: { click: clear } }, 'Clear'),
    );
}

/**
 * A button that selects (and reveals) a slice.
 * @param {SliceLink} l
 * @param {DetailsActions} act
 * @param {string} [prefix]
 */
function sliceLink(l, act, prefix) {
    return h(
        'button',
        { type: 'button', class: C.tlLink, title: 'Select this slice', on: { click: () => act.select(l) } },
        prefix ? h('span', { class: C.muted }, prefix) : null,
        h('span', { class: C.mono }, l.name),
        h('span', { class: C.muted }, ` · ${formatMicros(l.dur_us)} · ${act.trackName(l.track)}`),
    );
}

/**
 * @param {HTMLElement} box
 * @param {TimelineSlice} d
 * @param {DetailsActions} act
 */
export function showDetails(box, d, act) {
    const args = Object.entries(d.args || {});
    /** @type {[string, import('../dom.js').Child][]} */
    const rows = [
        ['Category', d.cat || DASH],
        ['Lane', act.trackName(d.track)],
        ['Start', formatOffset(d.ts_us, act.origin)],
        ['Duration', formatMicros(d.dur_us)],
        ['Self', formatMicros(d.self_us)],
        ['Depth', String(d.depth)],
    ];
    const flows = d.flows || [];
    const head = detailsHead(TITLE, act.fit, act.clear, { zoom: 'Fit the view to this slice (F)', clear: 'Clear the selection (Escape)' });
    const flame = act.flame;
    if (flame && d.dur_us > 0)
        head.insertBefore(
            h('button', { type: 'button', class: [C.btn, C.btnSm], title: 'What ran inside this slice, by call path', on: { click: () => flame(d) } }, 'Flame graph'),
            head.children[2],
        );
    replace(
        box,
        head,
        h('p', { class: [C.mono, C.tlSliceName] }, d.name),
        h('dl', { class: C.kv }, rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
        d.launcher
            ? h(
                  'div',
                  { class: C.tlRel, dataset: { rel: 'launcher' } },
                  h('h3', null, 'Launched by'),
                  h('ul', { class: C.tlList }, h('li', null, sliceLink(d.launcher, act)), d.launcher.op ? h('li', null, sliceLink(d.launcher.op, act, 'operator ')) : null),
              )
            : null,
        d.launched && d.launched.length
            ? h('div', { class: C.tlRel, dataset: { rel: 'launched' } }, h('h3', null, `Launched (${d.launched.length})`), h('ul', { class: C.tlList }, d.launched.map((l) => h('li', null, sliceLink(l, act)))))
            : null,
        d.parents && d.parents.length
            ? h('div', { class: C.tlRel, dataset: { rel: 'parents' } }, h('h3', null, 'Parents'), h('ol', { class: C.tlList }, d.parents.map((p) => h('li', null, sliceLink(p, act)))))
            : null,
        flows.length
            ? h(
                  'div',
                  { class: C.tlRel, dataset: { rel: 'flows' } },
                  h('h3', null, `Flows (${flows.length})`),
                  h(
                      'ul',
                      { class: C.tlList },
                      flows.map((f) =>
                          h(
                              'li',
                              null,
                              h(
                                  'button',
                                  { type: 'button', class: C.tlLink, title: 'Follow this flow', on: { click: () => act.follow(f, d) } },
                                  f.dir === 'out' ? '→ to ' : '← from ',
                                  h('span', null, act.trackName(f.track)),
                                  h('span', { class: C.muted }, ` at ${formatOffset(f.ts_us, act.origin)} (${f.cat || 'flow'})`),
                              ),
                          ),
                      ),
                  ),
              )
            : null,
        args.length
            ? h(
                  'div',
                  { class: C.tlRel, dataset: { rel: 'args' } },
                  h('h3', null, 'Arguments'),
                  h('dl', { class: [C.kv, C.tlArgs] }, args.map(([k, v]) => [h('dt', { class: C.mono }, k), h('dd', { class: C.mono }, argText(v))])),
              )
            : null,
    );
}

/**
 * A counter lane's value at a clicked time, in the details panel.
 * @param {HTMLElement} box
 * @param {{name: string, unit: string}} def
 * @param {{ts: number, value: number, min: number, max: number} | null} v
 * @param {number} origin
 * @param {() => void} clear
 */
export function showCounterDetails(box, def, v, origin, clear) {
    replace(
        box,
        h('div', { class: C.tlDetailsHead }, h('h2', { class: C.sectionTitle }, 'Counter'), h('span', { class: C.spacer }), h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: clear } }, 'Clear')),
        h('p', { class: [C.mono, C.tlSliceName] }, def.name),
        v
            ? h(
                  'dl',
                  { class: C.kv },
                  [
                      ['Value', formatCounter(v.value, def.unit)],
                      ['At', formatOffset(v.ts, origin)],
                      ['Min – max in this pixel', `${formatCounter(v.min, def.unit)} – ${formatCounter(v.max, def.unit)}`],
                  ].map(([k, x]) => [h('dt', null, k), h('dd', null, x)]),
              )
            : h('p', { class: C.muted }, 'No sample at this time.'),
    );
}

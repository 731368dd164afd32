// @ts-check
/**
 * views/timeline.js — the run page's Timeline tab (`&view=timeline`): the
 * slices of one rank's CPU threads and GPU streams on a zoomable canvas.
 * This module mounts the tab and owns its state: what is loaded, the
 * window shown, the lanes' layout and scroll, hover, selection, area and
 * pins, and wires them to the DOM, the API and the URL. The parts live in
 * web/js/timeline/: layout.js (rows and their y; pure), data.js (unpacked
 * windows, lookups; pure), colours.js (pure), input.js (keys and wheel;
 * pure), draw.js (ruler, lanes, minimap), overlay.js (hover, selection,
 * flows, area; tooltip), labels.js (the label column: collapse and pin
 * buttons), details.js and aggregate.js (the two panels), search.js (the
 * search box).
 *
 * Data (api.js): /timeline/tracks once per rank (tracks, counters, steps,
 * time span), then /timeline for the window shown at one level of detail:
 * a window three screens wide, fetched again only when the zoom level
 * changes, the view leaves it (timescale.js) or the lanes shown change.
 * /timeline/slice fills the details panel, /timeline/search the search
 * box, /timeline/aggregate the table of an area selection. A coarse
 * whole-run fetch draws the minimap and scales the counters. Only the
 * latest answer of each kind is kept (one AbortController each).
 *
 * Drawing (docs/style.md §19): every change calls invalidate(), which
 * draws once in the next animation frame. The slices canvas (lanes), the
 * ruler and the minimap are the "main" layer (draw.js); hover, selection,
 * flow arrows and the area selection are drawn on an overlay canvas
 * (overlay.js), so moving the mouse never repaints slices
 * (invalidateOverlay). Track labels are DOM (buttons to collapse a group,
 * pin a track), so every trace string reaches the page as text.
 *
 * Mouse: drag pans (and scrolls the lanes); Shift+drag or a drag on the
 * ruler selects an area; a click selects a slice, or zooms into a merged
 * item. Keys and wheel as input.js says; the minimap moves the view.
 *
 * URL state (replaceState, debounced): &start= &end= (window, µs),
 * &sel=track:ts:dur, &pins=ids, &q=search, &cp=1 (the critical path shown;
 * timeline/critpath.js). A reload restores the view;
 * back/forward and pasted links are applied (onRoute), the view's own
 * writes are not (`written`).
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, h, onDprChange, replace } from '../dom.js';
import { formatOffset } from '../format.js';
import { buildSel, parseSel, urlTime } from '../router.js';
import { analysisError, tabRank, updateRoute } from '../tabs.js';
import * as T from '../timescale.js';
import { showAggregate, showAreaEmpty, showAreaError, showAreaLoading } from '../timeline/aggregate.js';
import { createCritPath } from '../timeline/critpath.js';
import { counterMap, itemStartingAt, unpackWindow } from '../timeline/data.js';
import { showDetails, showDetailsEmpty, showDetailsError, showDetailsLoading } from '../timeline/details.js';
import { drawLanes, drawMini, drawRuler } from '../timeline/draw.js';
import { KEYS, KEY_PAN, KEY_ZOOM, keyAction, wheelAction } from '../timeline/input.js';
import { renderLabels } from '../timeline/labels.js';
import * as L from '../timeline/layout.js';
import { drawOverlay, showTip } from '../timeline/overlay.js';
import { createSearch } from '../timeline/search.js';

export { nameHash, sliceCategory } from '../timeline/colours.js';

/** @typedef {import('../api.js').TimelineTracks} TimelineTracks */
/** @typedef {import('../api.js').TimelineTrack} TimelineTrack */
/** @typedef {import('../api.js').TimelineSlice} TimelineSlice */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/** @typedef {import('../router.js').Route} Route */
/** @typedef {import('../timescale.js').Viewport} Viewport */
/** @typedef {import('../timeline/layout.js').Hit} Hit */
/** @typedef {import('../timeline/data.js').Items} Items */
/** @typedef {import('../timeline/data.js').CounterSeries} CounterSeries */
/** @typedef {import('../timeline/overlay.js').Selection} Selection */

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
export function mount(root, ctx) {
    unmount();
    active = createTimeline(root, ctx);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {TabContext} ctx
 */
function createTimeline(root, ctx) {
    const { store, run } = ctx;
    let destroyed = false;
    let rank = tabRank(run, store.get().route);

    /** @type {TimelineTracks | null} */
    let meta = null;
    /** @type {T.Span} */
    let bounds = { start: 0, end: 1 };
    let origin = 0;
    /** @type {Viewport} */
    let view = { start: 0, end: 1, width: 1000 };
    /** @type {Map<number, TimelineTrack>} */
    const trackById = new Map();

    /** The fetched window: items per track and depth. */
    /** @type {T.FetchWindow | null} */
    let win = null;
    let winTracksKey = '';
    /** @type {Map<number, Items[]>} */
    let items = new Map();
    /** @type {Map<number, CounterSeries>} */
    let counters = new Map();
    /** Whole-run data for the minimap and the counters' scales. */
    /** @type {{items: Map<number, Items[]>, counters: Map<number, CounterSeries>} | null} */
    let whole = null;

    /** @type {L.Layout} */
    let layout = L.EMPTY_LAYOUT;
    let scrollY = 0;
    /** @type {Set<string>} */
    const collapsed = new Set();
    let showEmpty = false;
    /** @type {Set<number>} */
    let pins = new Set(store.get().route.pins);

    /** @type {Hit | null} */
    let hover = null;
    /** @type {Selection | null} */
    let sel = null;
    /** @type {TimelineSlice | null} */
    let details = null;
    /** @type {{start: number, end: number} | null} */
    let area = null;
    /** @type {string | null} */
    let highlight = null;
    /** A flow end to select once its window is loaded. */
    /** @type {{track: number, ts: number} | null} */
    let pendingTarget = null;

    const search = createSearch({
        initial: store.get().route.q,
        runId: run.id,
        rank: () => rank,
        selection: () => sel,
        select: (hit) => select({ track: hit.track, ts: hit.ts_us, dur: hit.dur_us, id: hit.id || undefined, name: hit.name }, { reveal: true }),
        changed: () => invalidate(),
        writeUrl: () => scheduleUrl(),
        escape: () => plot.focus(),
    });

    /** What this view last wrote to the URL (so its own changes are not re-applied). */
    let written = { start: '', end: '', sel: '', pins: '', q: search.query, cp: store.get().route.cp };
    /** Whether the URL's selection is still to be restored (first load only). */
    let firstLoad = true;

    // --- DOM ---------------------------------------------------------------------------
    const windowText = h('span', { class: [C.muted, C.nowrap] });
    const emptyBox = h('input', { type: 'checkbox' });
    const fitBtn = h('button', { type: 'button', class: [C.btn, C.btnSm], title: 'Show the whole run' }, 'Whole run');
    const keysBtn = h('button', { type: 'button', class: [C.btn, C.btnSm], title: 'Keyboard and mouse (?)', 'aria-expanded': 'false' }, 'Keys ?');
    const download = h(
        'a',
        { class: [C.btn, C.btnSm], href: api.analysisUrl(run.id, 'source', { rank }), download: '', title: 'The original trace file of this rank (opens in Perfetto)' },
        'Download trace',
    );
    const cp = createCritPath({
        runId: run.id, rank: () => rank, plot: () => plot, changed: () => invalidateOverlay(),
        initial: store.get().route.cp, toggled: () => scheduleUrl(),
    });
    const toolbar = h(
        'div',
        { class: [C.toolbar, C.tlToolbar] },
        search.input,
        search.prevBtn,
        search.nextBtn,
        search.hitText,
        h('span', { class: C.spacer }),
        windowText,
        h('label', { class: [C.field, C.nowrap] }, emptyBox, h('span', null, 'Empty lanes')),
        fitBtn,
        cp.button,
        keysBtn,
        download,
    );
    const help = h(
        'div',
        { class: [C.card, C.cardPad, C.tlHelp], hidden: true },
        h('h2', { class: C.sectionTitle }, 'Timeline keys'),
        h('dl', { class: C.kv }, KEYS.map(([k, v]) => [h('dt', null, h('kbd', null, k)), h('dd', null, v)])),
    );

    const miniCanvas = h('canvas', { class: C.tlCanvas, 'aria-hidden': 'true' });
    const mini = h('div', { class: C.tlMini, title: 'The whole run: click or drag to move the view' }, miniCanvas);
    const rulerCanvas = h('canvas', { class: C.tlCanvas, 'aria-hidden': 'true' });
    const lanesCanvas = h('canvas', { class: C.tlCanvas, 'aria-hidden': 'true' });
    const overCanvas = h('canvas', { class: C.tlCanvas, 'aria-hidden': 'true' });
    const tip = h('div', { class: C.tlTip, hidden: true, role: 'status' });
    const rulerBox = h('div', { class: C.tlRuler }, rulerCanvas);
    const lanesBox = h('div', { class: C.tlLanes }, lanesCanvas);
    const plot = h('div', { class: C.tlPlot, role: 'application', 'aria-label': 'Timeline: W/S zoom, A/D pan, ? for keys', tabindex: '0' }, rulerBox, lanesBox, overCanvas, tip);
    const pinnedLabels = h('div', { class: C.tlPinned });
    const scrollInner = h('div', { class: C.tlScrollInner });
    const scrollLabels = h('div', { class: C.tlScroll }, scrollInner);
    const labels = h('div', { class: C.tlLabels }, pinnedLabels, scrollLabels);
    const body = h(
        'div',
        { class: C.tl },
        h('div', { class: [C.tlCorner, C.muted] }, 'Whole run'),
        mini,
        h('div', { class: [C.tlCorner, C.muted] }, h('span', null, 'Time'), h('span', null, 'Steps')),
        plot,
        labels,
    );
    const detailsBox = h('section', { class: [C.card, C.cardPad, C.tlDetails], 'aria-label': 'Selected slice' });
    const areaBox = h('section', { class: [C.card, C.cardPad, C.tlArea], 'aria-label': 'Area selection' });
    const status = h('div');
    const content = h('div', null, toolbar, cp.legend, help, body, h('div', { class: C.tlPanels }, detailsBox, areaBox));
    root.replaceChildren(h('div', { class: C.page }, status, content));
    content.hidden = true;
    showDetailsEmpty(detailsBox);
    showAreaEmpty(areaBox);

    // --- loading ------------------------------------------------------------------------
    let loadCtrl = new AbortController();
    /** @type {AbortController | null} */
    let winCtrl = null;
    /** @type {AbortController | null} */
    let selCtrl = null;
    /** @type {AbortController | null} */
    let aggCtrl = null;

    async function load() {
        loadCtrl.abort();
        loadCtrl = new AbortController();
        const mine = loadCtrl;
        replace(status, h('p', { class: [C.muted, C.loading] }, 'Loading the timeline…'));
        content.hidden = true;
        try {
            const m = await api.getTimelineTracks(run.id, store.get().route.rank, mine.signal);
            if (destroyed || mine !== loadCtrl) return;
            setMeta(m);
        } catch (e) {
            if (destroyed || mine !== loadCtrl || (e instanceof api.ApiError && e.code === 'aborted')) return;
            replace(status, analysisError(e, 'timeline', store.get().route, () => load()));
        }
    }

    /** @param {TimelineTracks} m */
    function setMeta(m) {
        meta = m;
        rank = typeof m.rank === 'number' ? m.rank : rank;
        download.setAttribute('href', api.analysisUrl(run.id, 'source', { rank }));
        trackById.clear();
        for (const t of m.tracks || []) trackById.set(t.id, t);
        bounds = { start: m.t0_us, end: Math.max(m.t1_us, m.t0_us + T.MIN_SPAN_US) };
        origin = m.t0_us;
        win = null;
        items = new Map();
        counters = new Map();
        whole = null;
        replace(status);
        if (!(m.tracks || []).length) {
            replace(status, alertBox('info', 'No slices in this rank', 'The trace of this rank holds no duration events to draw.'));
            return;
        }
        content.hidden = false;
        const r = store.get().route;
        view = T.clampView(r.start !== null && r.end !== null ? { start: r.start, end: r.end, width: plotWidth() } : { ...bounds, width: plotWidth() }, bounds);
        buildRows();
        invalidate();
        loadWhole();
        maybeFetch(true);
        const ref = firstLoad ? parseSel(r.sel) : null;
        if (ref) select(ref, { reveal: false });
        if (search.query) search.run(search.query, false);
        if (!firstLoad) scheduleUrl(); // a new rank: the old selection is gone
        firstLoad = false;
    }

    async function loadWhole() {
        const mine = loadCtrl;
        try {
            const w = await api.getTimeline(run.id, { rank, start: bounds.start, end: bounds.end, width: Math.max(200, Math.min(4000, Math.round(mini.clientWidth || 1000))) }, mine.signal);
            if (destroyed || mine !== loadCtrl) return;
            whole = { items: unpackWindow(w), counters: counterMap(w) };
            invalidate();
        } catch {
            // the minimap stays empty; the lanes report errors
        }
    }

    /** The tracks parameter of the lanes shown: "" when all are. */
    function tracksParam() {
        const ids = L.shownTrackIds(layout);
        return ids.length === trackById.size ? '' : ids.join(',');
    }

    let fetchTimer = 0;
    /** The window being fetched, if any (a view it covers needs no other fetch). */
    /** @type {{win: T.FetchWindow, key: string} | null} */
    let inflight = null;
    /** @param {boolean} [now] */
    function maybeFetch(now) {
        if (!meta) return;
        const key = tracksParam();
        if (key === winTracksKey && !T.needsRefetch(win, view, bounds)) return;
        if (inflight && key === inflight.key && !T.needsRefetch(inflight.win, view, bounds)) return;
        clearTimeout(fetchTimer);
        fetchTimer = window.setTimeout(() => fetchWindow(key), now ? 0 : 60);
    }

    /** @param {string} key tracks parameter ("" = all) */
    async function fetchWindow(key) {
        if (winCtrl) winCtrl.abort();
        const mine = new AbortController();
        winCtrl = mine;
        const fw = T.fetchWindow(view, bounds);
        inflight = { win: fw, key };
        plot.dataset.busy = '1';
        try {
            const w = await api.getTimeline(run.id, { rank, start: urlTime(fw.start), end: urlTime(fw.end), width: fw.width, tracks: key || null }, mine.signal);
            if (destroyed || winCtrl !== mine) return;
            win = fw;
            winTracksKey = key;
            items = unpackWindow(w);
            counters = counterMap(w);
            plot.dataset.loaded = String(Date.now());
            resolvePending();
            invalidate();
            maybeFetch();
        } catch (e) {
            if (destroyed || winCtrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            replace(status, analysisError(e, 'timeline window', store.get().route, () => {
                replace(status);
                win = null;
                maybeFetch(true);
            }));
        } finally {
            if (winCtrl === mine) {
                delete plot.dataset.busy;
                inflight = null;
            }
        }
    }

    // --- lanes ---------------------------------------------------------------------------

    /** Lays the lanes out again and redraws their labels. */
    function buildRows() {
        if (!meta) return;
        layout = L.buildLayout(meta.tracks, meta.counters || [], { pins, collapsed, showEmpty });
        renderLabels(pinnedLabels, scrollInner, layout, pins, {
            toggleGroup: (key) => {
                if (collapsed.has(key)) collapsed.delete(key);
                else collapsed.add(key);
                relayout();
            },
            togglePin,
        });
        clampScroll();
    }

    /** A change of the lanes shown: lay out, draw, fetch what they need. */
    function relayout() {
        buildRows();
        invalidate();
        maybeFetch(true);
    }

    /** @param {number} id */
    function togglePin(id) {
        if (pins.has(id)) pins.delete(id);
        else pins.add(id);
        relayout();
        scheduleUrl();
    }

    function lanesHeight() {
        return Math.max(0, lanesBox.clientHeight);
    }

    function clampScroll() {
        scrollY = L.clampScroll(layout, lanesHeight(), scrollY);
        scrollInner.style.transform = `translateY(${-scrollY}px)`;
    }

    function plotWidth() {
        return Math.max(50, plot.clientWidth || 1000);
    }

    /** @param {number} id */
    function trackName(id) {
        const t = trackById.get(id);
        return t ? L.laneTitle(t) : `track ${id}`;
    }

    // --- drawing ---------------------------------------------------------------------------
    let frame = 0;
    let needMain = false;
    let needOver = false;
    let lanePaints = 0;

    function invalidate() {
        needMain = true;
        needOver = true;
        if (!frame) frame = requestAnimationFrame(paint);
    }

    function invalidateOverlay() {
        needOver = true;
        if (!frame) frame = requestAnimationFrame(paint);
    }

    function paint() {
        frame = 0;
        if (destroyed || !meta || content.hidden) return;
        const w = plotWidth();
        if (w !== view.width) view = T.clampView({ ...view, width: w }, bounds);
        clampScroll();
        if (needMain) {
            needMain = false;
            /** @type {import('../timeline/draw.js').Scene} */
            const scene = {
                view,
                bounds,
                origin,
                steps: meta.steps || [],
                counterDefs: meta.counters || [],
                trackById,
                layout,
                scrollY,
                items,
                counters,
                win,
                whole,
                highlight,
                queryLower: search.queryLower,
                hits: search.hits,
            };
            drawRuler(rulerCanvas, scene);
            lanesBox.dataset.paints = String(++lanePaints); // tests: hovering must not repaint
            drawLanes(lanesCanvas, scene, lanesHeight());
            drawMini(miniCanvas, scene, Math.max(50, mini.clientWidth), Math.max(10, mini.clientHeight));
            replace(windowText, `${formatOffset(view.start, origin)} – ${formatOffset(view.end, origin)} (${T.formatSpan(view.end - view.start)})`);
        }
        if (needOver) {
            needOver = false;
            drawOverlay(overCanvas, { view, layout, scrollY, trackById, items, hover, sel, details, area, lanesH: lanesHeight() }, plot.clientHeight);
            const g = overCanvas.getContext('2d');
            if (g) cp.draw(g, { view, layout, scrollY, trackById, items, height: plot.clientHeight });
            cp.need(view);
        }
    }

    // --- view changes ------------------------------------------------------------------------

    /**
     * @param {Viewport} v
     */
    function setView(v) {
        view = T.clampView(v, bounds);
        hover = null;
        tip.hidden = true;
        invalidate();
        maybeFetch();
        scheduleUrl();
    }

    /** @param {number} factor */
    function zoomKey(factor) {
        const t = mouseX !== null ? T.pxToTime(view, mouseX) : (view.start + view.end) / 2;
        setView(T.zoomAt(view, factor, t, bounds));
    }

    function fitSelection() {
        if (sel) setView(T.fitSpan(sel.ts, sel.ts + sel.dur, view.width, bounds));
        else if (area) setView(T.fitSpan(area.start, area.end, view.width, bounds, 0.02));
        else setView({ ...bounds, width: view.width });
    }

    // --- selection and details ---------------------------------------------------------------

    /** @type {import('../timeline/details.js').DetailsActions} */
    const detailsActions = {
        get origin() {
            return origin;
        },
        trackName,
        select: (l) => select({ track: l.track, ts: l.ts_us, dur: l.dur_us, id: l.id || undefined, name: l.name }, { reveal: true }),
        follow: (f, d) => followFlow(f, d),
        fit: () => fitSelection(),
        clear: () => clearSelection(),
    };

    /**
     * Selects a slice by track, start and duration (what the URL holds).
     * @param {Selection} ref
     * @param {{reveal?: boolean}} [opts] bring it into view
     */
    async function select(ref, opts = {}) {
        sel = { ...ref };
        details = null;
        showDetailsLoading(detailsBox, ref);
        if (opts.reveal) {
            const px = ref.dur / T.usPerPx(view);
            setView(px > view.width * 0.9 ? T.fitSpan(ref.ts, ref.ts + ref.dur, view.width, bounds) : T.revealTime(view, ref.ts + ref.dur / 2, bounds));
        }
        invalidateOverlay();
        scheduleUrl();
        if (selCtrl) selCtrl.abort();
        const mine = new AbortController();
        selCtrl = mine;
        try {
            const d = await api.getTimelineSlice(run.id, { rank, track: ref.track, ts: urlTime(ref.ts), dur: urlTime(ref.dur), id: ref.id || null }, mine.signal);
            if (destroyed || selCtrl !== mine) return;
            details = d;
            if (sel) {
                sel.depth = d.depth;
                sel.name = d.name;
                sel.id = d.id;
            }
            showDetails(detailsBox, d, detailsActions);
            cp.showFor(d.id, detailsBox);
            invalidateOverlay();
        } catch (e) {
            if (destroyed || selCtrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            showDetailsError(detailsBox, e);
        }
    }

    function clearSelection() {
        sel = null;
        details = null;
        cp.showFor(null, detailsBox);
        if (selCtrl) selCtrl.abort();
        showDetailsEmpty(detailsBox);
        invalidateOverlay();
        scheduleUrl();
    }

    /**
     * Selects the other end of a flow: a launched or launching slice
     * directly, else the slice starting there once its window is loaded.
     * @param {{dir: string, track: number, ts_us: number}} f
     * @param {TimelineSlice} d
     */
    function followFlow(f, d) {
        const near = (/** @type {number} */ a, /** @type {number} */ b) => Math.abs(a - b) < 0.002;
        const known = [...(d.launched || []), ...(d.launcher ? [d.launcher] : [])].find((l) => l.track === f.track && near(l.ts_us, f.ts_us));
        if (known) {
            select({ track: known.track, ts: known.ts_us, dur: known.dur_us, id: known.id || undefined, name: known.name }, { reveal: true });
            return;
        }
        pendingTarget = { track: f.track, ts: f.ts_us };
        setView(T.revealTime(view, f.ts_us, bounds));
        resolvePending();
    }

    function resolvePending() {
        if (!pendingTarget) return;
        const p = pendingTarget;
        const depths = items.get(p.track);
        const at = itemStartingAt(depths, p.ts, true);
        if (at && depths) {
            const it = depths[at.depth];
            pendingTarget = null;
            select({ track: p.track, ts: it.ts[at.i], dur: it.dur[at.i], id: it.id[at.i] || undefined, depth: at.depth, name: it.name[at.i] });
            return;
        }
        if (win && T.usPerPx(view) < 0.01) pendingTarget = null; // zoomed all the way in and not found
    }

    // --- area selection ---------------------------------------------------------------------------

    async function loadAggregate() {
        if (!area) return;
        const a = area;
        if (aggCtrl) aggCtrl.abort();
        const mine = new AbortController();
        aggCtrl = mine;
        showAreaLoading(areaBox);
        try {
            const ids = L.shownTrackIds(layout);
            const r = await api.getTimelineAggregate(
                run.id,
                { rank, start: urlTime(a.start), end: urlTime(a.end), tracks: ids.length === trackById.size ? null : ids.join(',') },
                mine.signal,
            );
            if (destroyed || aggCtrl !== mine) return;
            showAggregate(areaBox, a, r, {
                origin,
                highlight,
                counterDefs: meta ? meta.counters : [],
                toggle: (name) => {
                    highlight = highlight === name ? null : name;
                    invalidate();
                    return highlight;
                },
                zoom: () => setView(T.fitSpan(a.start, a.end, view.width, bounds, 0.02)),
                clear: () => clearArea(),
            });
        } catch (e) {
            if (destroyed || aggCtrl !== mine || (e instanceof api.ApiError && e.code === 'aborted')) return;
            showAreaError(areaBox, e);
        }
    }

    function clearArea() {
        area = null;
        highlight = null;
        if (aggCtrl) aggCtrl.abort();
        showAreaEmpty(areaBox);
        invalidate();
    }

    // --- pointer, wheel and keys ---------------------------------------------------------------------
    /** @type {number | null} */
    let mouseX = null;
    /** @type {{x: number, y: number, t: number, mode: 'press' | 'pan' | 'area', view: Viewport, scroll: number, shift: boolean, ruler: boolean, id: number} | null} */
    let drag = null;

    /** @param {MouseEvent} ev */
    function local(ev) {
        const r = plot.getBoundingClientRect();
        return { x: ev.clientX - r.left, y: ev.clientY - r.top };
    }

    /**
     * @param {number} x
     * @param {number} y
     */
    function hitTest(x, y) {
        return L.hitTest(layout, scrollY, items, view, x, y);
    }

    plot.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0 || !meta) return;
        const p = local(ev);
        plot.focus({ preventScroll: true });
        drag = { x: p.x, y: p.y, t: T.pxToTime(view, p.x), mode: 'press', view, scroll: scrollY, shift: ev.shiftKey, ruler: p.y < L.HEAD_H, id: ev.pointerId };
        plot.setPointerCapture(ev.pointerId);
        ev.preventDefault();
    });
    plot.addEventListener('pointermove', (ev) => {
        const p = local(ev);
        mouseX = p.x;
        if (drag) {
            const dx = p.x - drag.x;
            const dy = p.y - drag.y;
            if (drag.mode === 'press' && Math.abs(dx) + Math.abs(dy) > 3) drag.mode = drag.shift || drag.ruler ? 'area' : 'pan';
            if (drag.mode === 'pan') {
                scrollY = drag.scroll - dy;
                clampScroll();
                setView(T.panBy(drag.view, -dx * T.usPerPx(drag.view), bounds));
            } else if (drag.mode === 'area') {
                const t = Math.max(bounds.start, Math.min(bounds.end, T.pxToTime(view, p.x)));
                area = { start: Math.min(drag.t, t), end: Math.max(drag.t, t) };
                invalidateOverlay();
            }
            return;
        }
        const hit = hitTest(p.x, p.y);
        const same = hit && hover && hit.track === hover.track && hit.depth === hover.depth && hit.i === hover.i;
        hover = hit;
        showTip(tip, plot, hit, items, origin);
        if (!same) invalidateOverlay();
    });
    plot.addEventListener('pointerleave', () => {
        mouseX = null;
        if (hover) {
            hover = null;
            invalidateOverlay();
        }
        tip.hidden = true;
    });
    plot.addEventListener('pointerup', (ev) => {
        if (!drag) return;
        const d = drag;
        drag = null;
        const p = local(ev);
        if (d.mode === 'area') {
            if (area && T.timeToPx(view, area.end) - T.timeToPx(view, area.start) >= 3) loadAggregate();
            else clearArea();
            return;
        }
        if (d.mode !== 'press') return;
        if (d.ruler) {
            if (area) clearArea();
            return;
        }
        const hit = hitTest(p.x, p.y);
        if (!hit) {
            if (sel) clearSelection();
            return;
        }
        const it = /** @type {Items} */ ((items.get(hit.track) || [])[hit.depth]);
        if (it.n[hit.i] > 1) {
            setView(T.fitSpan(it.ts[hit.i], it.ts[hit.i] + it.dur[hit.i], view.width, bounds, 0.05));
            return;
        }
        select({ track: hit.track, ts: it.ts[hit.i], dur: it.dur[hit.i], id: it.id[hit.i] || undefined, depth: hit.depth, name: it.name[hit.i] });
    });
    plot.addEventListener('pointercancel', () => {
        drag = null;
    });
    plot.addEventListener(
        'wheel',
        (ev) => {
            if (!meta) return;
            const a = wheelAction(ev, scrollY, L.maxScroll(layout, lanesHeight()));
            if (a.kind === 'page') return;
            ev.preventDefault();
            if (a.kind === 'zoom') {
                setView(T.zoomAt(view, a.factor, T.pxToTime(view, local(ev).x), bounds));
            } else if (a.kind === 'pan') {
                setView(T.panBy(view, a.px * T.usPerPx(view), bounds));
            } else {
                scrollY += a.dy;
                clampScroll();
                hover = null;
                tip.hidden = true;
                invalidate();
            }
        },
        { passive: false },
    );

    /** @param {KeyboardEvent} ev */
    function onKey(ev) {
        if (!meta || content.hidden || ev.ctrlKey || ev.metaKey || ev.altKey) return;
        const target = /** @type {HTMLElement | null} */ (ev.target instanceof HTMLElement ? ev.target : null);
        if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
        if (!root.isConnected) return;
        const span = view.end - view.start;
        switch (keyAction(ev.key)) {
            case 'zoomIn':
                zoomKey(KEY_ZOOM);
                break;
            case 'zoomOut':
                zoomKey(1 / KEY_ZOOM);
                break;
            case 'panLeft':
                setView(T.panBy(view, -span * KEY_PAN, bounds));
                break;
            case 'panRight':
                setView(T.panBy(view, span * KEY_PAN, bounds));
                break;
            case 'fit':
                fitSelection();
                break;
            case 'help':
                toggleHelp();
                break;
            case 'escape':
                if (area) clearArea();
                else if (sel) clearSelection();
                else return;
                break;
            default:
                return;
        }
        ev.preventDefault();
    }
    window.addEventListener('keydown', onKey);

    function toggleHelp() {
        help.hidden = !help.hidden;
        keysBtn.setAttribute('aria-expanded', String(!help.hidden));
    }
    keysBtn.addEventListener('click', toggleHelp);
    fitBtn.addEventListener('click', () => setView({ ...bounds, width: view.width }));
    emptyBox.addEventListener('change', () => {
        showEmpty = emptyBox.checked;
        relayout();
    });

    /** @param {PointerEvent} ev */
    function miniMove(ev) {
        const r = mini.getBoundingClientRect();
        const t = bounds.start + ((ev.clientX - r.left) / Math.max(1, r.width)) * (bounds.end - bounds.start);
        const half = (view.end - view.start) / 2;
        setView({ start: t - half, end: t + half, width: view.width });
    }
    let miniDrag = false;
    mini.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0 || !meta) return;
        miniDrag = true;
        mini.setPointerCapture(ev.pointerId);
        miniMove(ev);
    });
    mini.addEventListener('pointermove', (ev) => {
        if (miniDrag) miniMove(ev);
    });
    mini.addEventListener('pointerup', () => {
        miniDrag = false;
    });

    // --- URL ------------------------------------------------------------------------------------------
    let urlTimer = 0;
    function scheduleUrl() {
        clearTimeout(urlTimer);
        urlTimer = window.setTimeout(writeUrl, 250);
    }

    function writeUrl() {
        if (destroyed || !meta) return;
        const all = view.start <= bounds.start && view.end >= bounds.end;
        const selStr = sel ? buildSel(sel) : '';
        const pinList = [...pins].sort((a, b) => a - b);
        written = {
            start: all ? '' : String(view.start),
            end: all ? '' : String(view.end),
            sel: selStr,
            pins: pinList.join(','),
            q: search.query,
            cp: cp.on,
        };
        const r = store.get().route;
        if (r.view !== 'run' || r.tab !== 'timeline') return;
        updateRoute(store, { start: all ? null : view.start, end: all ? null : view.end, sel: selStr, pins: pinList, q: search.query, cp: cp.on });
    }

    /** @param {Route} r */
    function onRoute(r) {
        if (r.view !== 'run' || r.run !== run.id || r.tab !== 'timeline') return;
        if (tabRank(run, r) !== rank && meta) {
            rank = tabRank(run, r);
            meta = null;
            sel = null;
            details = null;
            area = null;
            search.reset();
            cp.reset();
            showDetailsEmpty(detailsBox);
            showAreaEmpty(areaBox);
            load();
            return;
        }
        if (!meta) return;
        // changes this view did not make itself (back/forward, a pasted link)
        const rs = r.start === null ? '' : String(r.start);
        const re = r.end === null ? '' : String(r.end);
        const near = (/** @type {string} */ a, /** @type {string} */ b) => a === b || (a !== '' && b !== '' && Math.abs(Number(a) - Number(b)) < 0.002);
        if (!near(rs, written.start) || !near(re, written.end)) {
            written.start = rs;
            written.end = re;
            setView(r.start !== null && r.end !== null ? { start: r.start, end: r.end, width: view.width } : { ...bounds, width: view.width });
        }
        if (r.sel !== written.sel) {
            written.sel = r.sel;
            const ref = parseSel(r.sel);
            if (ref) select(ref, { reveal: true });
            else clearSelection();
        }
        const pinStr = r.pins.join(',');
        if (pinStr !== written.pins) {
            written.pins = pinStr;
            pins = new Set(r.pins);
            relayout();
        }
        if (r.q !== written.q) {
            written.q = r.q;
            search.setQuery(r.q);
        }
        if (r.cp !== written.cp) {
            written.cp = r.cp;
            cp.set(r.cp);
        }
    }

    const unsubscribe = store.subscribe((next) => onRoute(next.route));

    // --- sizes ------------------------------------------------------------------------------------------
    const ro = new ResizeObserver(() => {
        if (!meta) return;
        const w = plotWidth();
        if (w !== view.width) {
            view = T.clampView({ ...view, width: w }, bounds);
            maybeFetch();
        }
        invalidate();
    });
    ro.observe(plot);
    ro.observe(mini);
    const stopDpr = onDprChange(invalidate);

    load();

    return {
        destroy() {
            destroyed = true;
            loadCtrl.abort();
            for (const c of [winCtrl, selCtrl, aggCtrl]) if (c) c.abort();
            search.destroy();
            cp.destroy();
            clearTimeout(fetchTimer);
            clearTimeout(urlTimer);
            if (frame) cancelAnimationFrame(frame);
            window.removeEventListener('keydown', onKey);
            unsubscribe();
            ro.disconnect();
            stopDpr();
        },
    };
}

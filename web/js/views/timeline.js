// @ts-check
/**
 * views/timeline.js — the run page's Timeline tab (`&view=timeline`): the
 * slices of one rank's CPU threads and GPU streams on a zoomable canvas.
 * This module mounts the tab, builds its DOM and draws; its state is one
 * object (timeline/state.js: what is loaded, the window shown, the lanes'
 * layout and scroll, hover, selection, area and pins) that three
 * controllers change: fetch.js (requests, latest wins), events.js
 * (pointer, wheel, keys) and urlsync.js (state ↔ route). The other parts
 * live in web/js/timeline/ too: layout.js (rows and their y; pure), data.js (unpacked
 * windows, lookups; pure), colours.js (pure), input.js (keys and wheel;
 * pure), draw.js (ruler, lanes, minimap), overlay.js (hover, selection,
 * flows, area; tooltip), labels.js (the label column: collapse and pin
 * buttons), details.js and aggregate.js (the two panels), search.js (the
 * search box), loglane.js (the job log's lane, counters, search and details).
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
import { buildSel, enumParam, flagParam, intParam, listParam, parsePins, parseSel, stringParam, windowParams } from '../params.js';
import { analysisError, tabRank, tabRoute } from '../tabs.js';
import * as T from '../timescale.js';
import { showAreaEmpty } from '../timeline/aggregate.js';
import { createArea, parseArea } from '../timeline/area.js';
import { createCritPath } from '../timeline/critpath.js';
import { LOG_TRACK, createLogLane } from '../timeline/loglane.js';
import { itemStartingAt } from '../timeline/data.js';
import { showCounterDetails, showDetails, showDetailsEmpty, showDetailsError, showDetailsLoading } from '../timeline/details.js';
import { drawLanes, drawMini, drawRuler } from '../timeline/draw.js';
import { createDrawer } from '../timeline/drawer.js';
import { KEYS } from '../timeline/input.js';
import { renderLabels, stickLabels } from '../timeline/labels.js';
import * as L from '../timeline/layout.js';
import { searchSources, stackedRanks } from '../timeline/multirank.js';
import { rankKey } from '../timeline/layout.js';
import { createOptions, createRankPicker } from '../timeline/options.js';
import { drawOverlay } from '../timeline/overlay.js';
import { createSearch } from '../timeline/search.js';
import { createState } from '../timeline/state.js';
import { createFetcher } from '../timeline/fetch.js';
import { bindInput } from '../timeline/events.js';
import { createUrlSync } from '../timeline/urlsync.js';
import { useThemeColours } from '../timeline/colours.js';
import { onThemeChange, themedColours } from '../theme.js';

export { nameHash, sliceCategory } from '../timeline/colours.js';

/** @typedef {import('../apitypes.js').TimelineTracks} TimelineTracks */
/** @typedef {import('../apitypes.js').TimelineTrack} TimelineTrack */
/** @typedef {import('../apitypes.js').TimelineSlice} TimelineSlice */
/** @typedef {import('../tabs.js').TabContext} TabContext */
/**
 * This tab's URL parameters (after run, view and rank): the window (µs on
 * the trace clock; null = the whole rank), the selected slice
 * ("track:ts:dur", "" = none), the pinned track ids (ascending), the
 * search text, whether the critical path is outlined, whether the GPU
 * lanes come first, how many depths a lane shows (0 = all) and the ranks
 * stacked on one timeline ("all", "0,2,5"; "" = one rank) and those of
 * them folded to their group row, the area selection ("start:end", µs)
 * and how its panel groups it.
 */
export const params = Object.freeze({
    ...windowParams(),
    sel: /** @type {import('../params.js').Param<string>} */ ({
        key: 'sel',
        type: 'string',
        default: '',
        parse: (raw) => {
            const sel = parseSel(raw || '');
            return sel ? buildSel(sel) : undefined;
        },
        serialize: (v) => {
            const sel = parseSel(v);
            return sel ? buildSel(sel) : null;
        },
    }),
    pins: listParam('pins', parsePins),
    q: stringParam('q'),
    cp: flagParam('cp'),
    gpufirst: flagParam('gpufirst'),
    depth: intParam('depth', /^[1-9][0-9]{0,2}$/, 0),
    ranks: stringParam('ranks', { re: /^(all|[0-9]{1,6}(,[0-9]{1,6}){0,255})$/ }),
    rfold: listParam('rfold', parsePins),
    area: stringParam('area', { re: /^[0-9]{1,17}(\.[0-9]{1,3})?:[0-9]{1,17}(\.[0-9]{1,3})?$/ }),
    agroup: enumParam('agroup', ['lane', 'cat', 'flame'], 'name'),
});

/** @typedef {import('../router.js').TabRoute<typeof params>} TimelineRoute */
/** @typedef {import('../router.js').TabRoute<typeof params>} Route */
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
    /** Everything the tab holds (timeline/state.js documents each field). */
    const st = createState(tabRoute(store.get().route, params), tabRank(run, tabRoute(store.get().route, params)), tabRoute(store.get().route, params).q);

    const search = createSearch({
        initial: tabRoute(store.get().route, params).q,
        sources: (q, signal) => [
            ...searchSources(run.id, st.stacked ? st.stacked.filter((r) => st.clocks.has(r)) : [st.rank], (r) => fetcher.deltaOf(r), q, signal),
            ...(st.stacked ? [] : [logLane.searchSource(q)]),
        ],
        selection: () => st.sel,
        select: (hit) => select({ track: hit.track, ts: hit.ts_us, dur: hit.dur_us, id: hit.id || undefined, name: hit.name }, { reveal: true }),
        changed: () => invalidate(),
        writeUrl: () => scheduleUrl(),
        escape: () => plot.focus(),
    });

    // --- DOM ---------------------------------------------------------------------------
    const windowText = h('span', { class: [C.muted, C.nowrap] });
    const emptyBox = h('input', { type: 'checkbox' });
    const fitBtn = h('button', { type: 'button', class: [C.btn, C.btnSm], title: 'Show the whole run' }, 'Whole run');
    const r0 = tabRoute(store.get().route, params);
    const runRanks = ((run.info && run.info.ranks) || []).map((k) => k.rank).sort((a, b) => a - b);
    st.stacked = stackedRanks(r0.ranks, runRanks);
    for (const r of r0.rfold) st.collapsed.add(rankKey(r));
    const rankPick = runRanks.length > 1 ? createRankPicker(runRanks, st.stacked, (chosen) => {
        st.stacked = chosen;
        scheduleUrl();
        reloadRanks();
    }) : null;
    const laneOpts = createOptions({ gpuFirst: r0.gpufirst, levels: r0.depth }, () => {
        relayout();
        scheduleUrl();
    });
    const keysBtn = h('button', { type: 'button', class: [C.btn, C.btnSm], title: 'Keyboard and mouse (?)', 'aria-expanded': 'false' }, 'Keys ?');
    const download = h(
        'a',
        { class: [C.btn, C.btnSm], href: api.analysisUrl(run.id, 'source', { rank: st.rank }), download: '', title: 'The original trace file of this rank (opens in Perfetto)' },
        'Download trace',
    );
    const cp = createCritPath({
        runId: run.id, rank: () => st.rank, plot: () => plot, changed: () => invalidateOverlay(),
        initial: tabRoute(store.get().route, params).cp, toggled: () => scheduleUrl(),
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
        laneOpts.elements,
        rankPick ? rankPick.el : null,
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
    // Focusing a label button (a click, Tab) makes the browser scroll the clipped
    // column natively, out of step with the canvas: take that as a lanes scroll.
    scrollLabels.addEventListener('scroll', () => {
        if (!scrollLabels.scrollTop) return;
        st.scrollY += scrollLabels.scrollTop;
        scrollLabels.scrollTop = 0;
        clampScroll();
        invalidate();
    });
    // stacked ranks: the strip shows one rank's steps (multirank.js mergeMeta), and says whose
    const stepsLabel = h('span', { dataset: { stepsLabel: '1' } }, 'Steps');
    const body = h(
        'div',
        { class: C.tl },
        h('div', { class: [C.tlCorner, C.muted] }, 'Whole run'),
        mini,
        h('div', { class: [C.tlCorner, C.muted] }, h('span', null, 'Time'), stepsLabel),
        plot,
        labels,
    );
    const detailsBox = h('section', { class: [C.card, C.cardPad, C.tlDetails], 'aria-label': 'Selected slice' });
    const areaBox = h('section', { class: [C.card, C.cardPad, C.tlArea], 'aria-label': 'Area selection' });
    const status = h('div');
    const drawer = createDrawer([detailsBox, areaBox], () => invalidate());
    const content = h('div', { class: C.tlTab }, toolbar, cp.legend, help, body, drawer.handle, drawer.box);
    root.replaceChildren(h('div', { class: C.page }, status, content));
    content.hidden = true;
    showDetailsEmpty(detailsBox);
    showAreaEmpty(areaBox);

    // --- loading ------------------------------------------------------------------------

    const fetcher = createFetcher(st, {
        runId: run.id,
        routeRank: () => tabRoute(store.get().route, params).rank,
        loading() {
            replace(status, h('p', { class: [C.muted, C.loading] }, 'Loading the timeline…'));
            content.hidden = true;
        },
        gotMeta: (m) => setMeta(m),
        failed: (e, what, retry) =>
            replace(status, analysisError(e, what, tabRoute(store.get().route, params), () => {
                if (what !== 'timeline') replace(status);
                retry();
            })),
        miniWidth: () => mini.clientWidth,
        busy(on) {
            if (on) plot.dataset.busy = '1';
            else delete plot.dataset.busy;
        },
        windowArrived() {
            logLane.inject(st);
            plot.dataset.loaded = String(Date.now());
            st.undrawn = true;
            resolvePending();
            invalidate();
        },
        invalidate: () => invalidate(),
    });
    const { load, maybeFetch } = fetcher;
    // the job log: a lane at the top once its lines arrive (timeline/loglane.js)
    const logLane = createLogLane(run.id, () => {
        buildRows();
        logLane.inject(st);
        invalidate();
    });

    /** @param {TimelineTracks} m */
    function setMeta(m) {
        st.meta = m;
        st.rank = typeof m.rank === 'number' ? m.rank : st.rank;
        download.setAttribute('href', api.analysisUrl(run.id, 'source', { rank: st.rank }));
        st.trackById.clear();
        for (const t of m.tracks || []) st.trackById.set(t.id, t);
        st.bounds = { start: m.t0_us, end: Math.max(m.t1_us, m.t0_us + T.MIN_SPAN_US) };
        st.origin = m.t0_us;
        replace(stepsLabel, st.stacked ? `Steps of rank ${st.rank}` : 'Steps');
        stepsLabel.title = st.stacked ? `The steps strip shows rank ${st.rank}'s steps, on the aligned clock` : '';
        st.win = null;
        st.items = new Map();
        st.counters = new Map();
        st.whole = null;
        replace(status);
        if (!(m.tracks || []).length) {
            replace(status, alertBox('info', 'No slices in this rank', 'The trace of this rank holds no duration events to draw.'));
            return;
        }
        content.hidden = false;
        drawer.fitHeight(content);
        const r = tabRoute(store.get().route, params);
        st.view = T.clampView(r.start !== null && r.end !== null ? { start: r.start, end: r.end, width: plotWidth() } : { ...st.bounds, width: plotWidth() }, st.bounds);
        buildRows();
        invalidate();
        logLane.load(st.stacked ? null : st.rank);
        fetcher.loadWhole();
        maybeFetch(true);
        const ref = st.firstLoad ? parseSel(r.sel) : null;
        if (ref) select(ref, { reveal: false });
        const a = st.firstLoad ? parseArea(r.area) : null;
        if (a) {
            st.area = a;
            area.load();
        }
        if (search.query) search.run(search.query, false);
        if (!st.firstLoad) scheduleUrl(); // a new rank: the old selection is gone
        st.firstLoad = false;
    }

    // --- lanes ---------------------------------------------------------------------------

    /** Lays the lanes out again and redraws their labels. */
    function buildRows() {
        if (!st.meta) return;
        st.layout = L.buildLayout(st.meta.tracks, st.meta.counters || [], {
            pins: st.pins,
            collapsed: st.collapsed,
            showEmpty: st.showEmpty,
            gpuFirst: laneOpts.gpuFirst,
            maxLevels: laneOpts.levels,
            ranks: st.stacked ? st.stacked.filter((r) => st.clocks.has(r)).map((r) => ({ rank: r, straggler: !!st.clocks.get(r)?.straggler })) : null,
            logs: st.stacked ? null : logLane.layout(),
        });
        renderLabels(pinnedLabels, scrollInner, st.layout, st.pins, {
            toggleGroup: (key) => {
                if (st.collapsed.has(key)) st.collapsed.delete(key);
                else st.collapsed.add(key);
                relayout();
                if (key.startsWith('rank:')) scheduleUrl();
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
        if (st.pins.has(id)) st.pins.delete(id);
        else st.pins.add(id);
        relayout();
        scheduleUrl();
    }

    function lanesHeight() {
        return Math.max(0, lanesBox.clientHeight);
    }

    function clampScroll() {
        st.scrollY = L.clampScroll(st.layout, lanesHeight(), st.scrollY);
        scrollInner.style.transform = `translateY(${-st.scrollY}px)`;
        stickLabels(scrollInner, st.layout, st.scrollY);
    }

    function plotWidth() {
        return Math.max(50, plot.clientWidth || 1000);
    }

    /** @param {number} id */
    function trackName(id) {
        const t = st.trackById.get(id);
        return t ? L.laneTitle(t) : `track ${id}`;
    }

    // --- drawing ---------------------------------------------------------------------------

    function invalidate() {
        st.needMain = true;
        st.needOver = true;
        if (!st.frame) st.frame = requestAnimationFrame(paint);
    }

    function invalidateOverlay() {
        st.needOver = true;
        if (!st.frame) st.frame = requestAnimationFrame(paint);
    }

    function paint() {
        st.frame = 0;
        if (st.destroyed || !st.meta || content.hidden) return;
        const w = plotWidth();
        if (w !== st.view.width) st.view = T.clampView({ ...st.view, width: w }, st.bounds);
        clampScroll();
        if (st.needMain) {
            st.needMain = false;
            /** @type {import('../timeline/draw.js').Scene} */
            const scene = {
                view: st.view,
                bounds: st.bounds,
                origin: st.origin,
                steps: st.meta.steps || [],
                counterDefs: st.meta.counters || [],
                trackById: st.trackById,
                layout: st.layout,
                scrollY: st.scrollY,
                items: st.items,
                counters: st.counters,
                win: st.win,
                whole: st.whole,
                highlight: st.highlight,
                queryLower: search.queryLower,
                hits: search.hits,
            };
            drawRuler(rulerCanvas, scene);
            lanesBox.dataset.paints = String(++st.lanePaints); // tests: hovering must not repaint
            drawLanes(lanesCanvas, scene, lanesHeight());
            if (st.undrawn) {
                // when a window answer reached the screen, in ms since the page's start (tests time it)
                st.undrawn = false;
                plot.dataset.drawn = performance.now().toFixed(1);
            }
            drawMini(miniCanvas, scene, Math.max(50, mini.clientWidth), Math.max(10, mini.clientHeight));
            replace(windowText, `${formatOffset(st.view.start, st.origin)} – ${formatOffset(st.view.end, st.origin)} (${T.formatSpan(st.view.end - st.view.start)})`);
        }
        if (st.needOver) {
            st.needOver = false;
            drawOverlay(overCanvas, { view: st.view, layout: st.layout, scrollY: st.scrollY, trackById: st.trackById, items: st.items, hover: st.hover, sel: st.sel, details: st.details, area: st.area, lanesH: lanesHeight() }, plot.clientHeight);
            const g = overCanvas.getContext('2d');
            // the critical path is one rank's: not drawn while ranks are stacked
            if (g && !st.stacked) cp.draw(g, { view: st.view, layout: st.layout, scrollY: st.scrollY, trackById: st.trackById, items: st.items, height: plot.clientHeight });
            if (!st.stacked) cp.need(st.view);
        }
    }

    // --- view changes ------------------------------------------------------------------------

    /**
     * @param {Viewport} v
     */
    function setView(v) {
        st.view = T.clampView(v, st.bounds);
        st.hover = null;
        tip.hidden = true;
        invalidate();
        maybeFetch();
        scheduleUrl();
    }

    function fitSelection() {
        if (st.sel) setView(T.fitSpan(st.sel.ts, st.sel.ts + st.sel.dur, st.view.width, st.bounds));
        else if (st.area) setView(T.fitSpan(st.area.start, st.area.end, st.view.width, st.bounds, 0.02));
        else setView({ ...st.bounds, width: st.view.width });
    }

    // --- selection and details ---------------------------------------------------------------

    /** @type {import('../timeline/details.js').DetailsActions} */
    const detailsActions = {
        get origin() {
            return st.origin;
        },
        trackName,
        select: (l) => select({ track: l.track, ts: l.ts_us, dur: l.dur_us, id: l.id || undefined, name: l.name }, { reveal: true }),
        follow: (f, d) => followFlow(f, d),
        fit: () => fitSelection(),
        clear: () => clearSelection(),
        flame: (d) => area.operator({ track: d.track, ts: d.ts_us, dur: d.dur_us, name: d.name }),
    };

    /**
     * Selects a slice by track, start and duration (what the URL holds).
     * @param {Selection} ref
     * @param {{reveal?: boolean}} [opts] bring it into view
     */
    function select(ref, opts = {}) {
        if (ref.track === LOG_TRACK) {
            selectLogLine(ref, opts);
            return;
        }
        st.sel = { ...ref };
        st.details = null;
        showDetailsLoading(detailsBox, ref);
        if (opts.reveal) {
            const px = ref.dur / T.usPerPx(st.view);
            setView(px > st.view.width * 0.9 ? T.fitSpan(ref.ts, ref.ts + ref.dur, st.view.width, st.bounds) : T.revealTime(st.view, ref.ts + ref.dur / 2, st.bounds));
        }
        invalidateOverlay();
        scheduleUrl();
        fetcher.fetchSlice(
            ref,
            (d) => {
                st.details = d;
                if (st.sel) {
                    st.sel.depth = d.depth;
                    st.sel.name = d.name;
                    st.sel.id = d.id;
                }
                showDetails(detailsBox, d, detailsActions);
                cp.showFor(d.id, detailsBox);
                invalidateOverlay();
            },
            (e) => showDetailsError(detailsBox, e),
        );
    }

    /**
     * A log line's marker: its text and fields come from memory.
     * @param {Selection} ref
     * @param {{reveal?: boolean}} opts
     */
    function selectLogLine(ref, opts) {
        st.sel = { ...ref, depth: 0 };
        st.details = null;
        fetcher.abortSlice();
        cp.showFor(null, detailsBox);
        if (!logLane.showLine(detailsBox, ref.id, st.origin, () => clearSelection())) showDetailsEmpty(detailsBox);
        if (opts.reveal) setView(T.revealTime(st.view, ref.ts, st.bounds));
        invalidateOverlay();
    }

    function clearSelection() {
        st.sel = null;
        st.details = null;
        cp.showFor(null, detailsBox);
        fetcher.abortSlice();
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
        st.pendingTarget = { track: f.track, ts: f.ts_us };
        setView(T.revealTime(st.view, f.ts_us, st.bounds));
        resolvePending();
    }

    function resolvePending() {
        if (!st.pendingTarget) return;
        const p = st.pendingTarget;
        const depths = st.items.get(p.track);
        const at = itemStartingAt(depths, p.ts, true);
        if (at && depths) {
            const it = depths[at.depth];
            st.pendingTarget = null;
            select({ track: p.track, ts: it.ts[at.i], dur: it.dur[at.i], id: it.id[at.i] || undefined, depth: at.depth, name: it.name[at.i] });
            return;
        }
        if (st.win && T.usPerPx(st.view) < 0.01) st.pendingTarget = null; // zoomed all the way in and not found
    }

    // --- area selection ---------------------------------------------------------------------------

    const area = createArea(st, tabRoute(store.get().route, params).agroup, {
        box: areaBox,
        fetcher,
        setView,
        invalidate: () => invalidate(),
        trackName,
        writeUrl: () => scheduleUrl(),
    });

    // --- pointer, wheel and keys (timeline/events.js) ----------------------------------------------
    const stopInput = bindInput(
        st,
        { root, plot, mini, tip, content, help, keysBtn, fitBtn, emptyBox },
        { setView, invalidate, invalidateOverlay, clampScroll, lanesHeight, loadAggregate: () => area.drawn(), clearArea: () => area.clear(), clearSelection, select, fitSelection, relayout,
            counterPicked: (def, v) => {
                clearSelection();
                showCounterDetails(detailsBox, def, v, st.origin, () => clearSelection());
            },
        },
    );

    /** The rank, or the ranks stacked, changed: drop what was shown and load again. */
    function reloadRanks() {
        st.meta = null;
        st.sel = null;
        st.details = null;
        st.area = null;
        st.collapsed = new Set([...st.collapsed].filter((k) => /^rank:\d+$/.test(k)));
        search.reset();
        cp.reset();
        cp.stacked(!!st.stacked);
        showDetailsEmpty(detailsBox);
        showAreaEmpty(areaBox);
        load();
    }
    cp.stacked(!!st.stacked);

    // --- URL (timeline/urlsync.js) -------------------------------------------------------------------
    const url = createUrlSync(st, {
        run,
        store,
        search,
        cp,
        laneOpts,
        runRanks,
        rankPick,
        area,
        newRank: reloadRanks,
        setView,
        select,
        clearSelection,
        relayout,
    });
    const scheduleUrl = url.schedule;

    // --- sizes ------------------------------------------------------------------------------------------
    const ro = new ResizeObserver(() => {
        if (!st.meta) return;
        const w = plotWidth();
        if (w !== st.view.width) {
            st.view = T.clampView({ ...st.view, width: w }, st.bounds);
            maybeFetch();
        }
        invalidate();
    });
    ro.observe(plot);
    ro.observe(mini);
    const onWinResize = () => {
        if (!content.hidden) drawer.fitHeight(content);
    };
    window.addEventListener('resize', onWinResize);
    const stopDpr = onDprChange(invalidate);
    useThemeColours(themedColours);
    const stopTheme = onThemeChange(() => {
        useThemeColours(themedColours);
        invalidate();
    });

    load();

    return {
        destroy() {
            st.destroyed = true;
            fetcher.destroy();
            logLane.destroy();
            search.destroy();
            cp.destroy();
            url.destroy();
            if (st.frame) cancelAnimationFrame(st.frame);
            stopInput();
            ro.disconnect();
            window.removeEventListener('resize', onWinResize);
            stopDpr();
            stopTheme();
        },
    };
}

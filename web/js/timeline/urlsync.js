// @ts-check
/**
 * timeline/urlsync.js — the Timeline tab's state ↔ its route. The URL
 * holds &start= &end= (the window, µs; none when the whole run is shown),
 * &sel=track:ts:dur, &pins=ids, &q= (search), &cp=1, &gpufirst=1 and
 * &depth=N (options.js), &ranks=all|0,2 (multirank.js), &rfold= (the
 * stacked ranks folded), &area=start:end and &agroup= (area.js) (router.js
 * parses and writes them).
 *
 * State → URL: schedule() writes the route (replaceState via updateRoute)
 * 250 ms after the last change, and remembers what it wrote
 * (state.written). URL → state: a route this view did not write itself
 * (back/forward, a pasted link) is applied field by field; a new rank
 * reloads the tab (host.newRank). Times compare within 2 ns, as the URL
 * keeps 3 decimals of µs.
 */

import { buildSel, parseSel } from '../params.js';
import { tabRank, tabRoute, updateRoute } from '../tabs.js';
import { params } from '../views/timeline.js';
import { areaParam, parseArea } from './area.js';
import { rankKey } from './layout.js';
import { ranksParam, stackedRanks } from './multirank.js';

/** @typedef {import('./state.js').TimelineState} TimelineState */
/** @typedef {import('../router.js').TabRoute<typeof import('../views/timeline.js').params>} Route */

/**
 * @typedef {object} UrlHost
 * @property {import('../apitypes.js').RunDetail} run
 * @property {import('../state.js').AppStore} store
 * @property {{query: string, setQuery: (q: string) => void}} search
 * @property {{on: boolean, set: (on: boolean) => void}} cp
 * @property {{gpuFirst: boolean, levels: number, set: (o: import('./options.js').LaneOptions) => boolean}} laneOpts
 * @property {number[]} runRanks     the run's ranks
 * @property {{show: (chosen: number[] | null) => void} | null} rankPick  the "Ranks" menu (multi-rank runs)
 * @property {{group: import('./aggregate.js').AreaGroup, isOperator: boolean, load: () => void, clear: () => void, setGroup: (g: import('./aggregate.js').AreaGroup) => boolean}} area
 * @property {() => void} newRank    state.rank or the stacked ranks changed: drop what was shown and load
 * @property {(v: import('../timescale.js').Viewport) => void} setView
 * @property {(ref: import('./overlay.js').Selection, opts?: {reveal?: boolean}) => void} select
 * @property {() => void} clearSelection
 * @property {() => void} relayout
 */

/**
 * @param {TimelineState} st
 * @param {UrlHost} host
 */
export function createUrlSync(st, host) {
    const { run, store, search, cp, laneOpts, setView, select, clearSelection, relayout } = host;

    function scheduleUrl() {
        clearTimeout(st.urlTimer);
        st.urlTimer = window.setTimeout(writeUrl, 250);
    }

    function writeUrl() {
        if (st.destroyed || !st.meta) return;
        const all = st.view.start <= st.bounds.start && st.view.end >= st.bounds.end;
        const selStr = st.sel ? buildSel(st.sel) : '';
        const pinList = [...st.pins].sort((a, b) => a - b);
        st.written = {
            start: all ? '' : String(st.view.start),
            end: all ? '' : String(st.view.end),
            sel: selStr,
            pins: pinList.join(','),
            q: search.query,
            cp: cp.on,
        };
        const r = tabRoute(store.get().route, params);
        if (r.view !== 'run' || r.tab !== 'timeline') return;
        updateRoute(store, {
            start: all ? null : st.view.start,
            end: all ? null : st.view.end,
            sel: selStr,
            pins: pinList,
            q: search.query,
            cp: cp.on,
            gpufirst: laneOpts.gpuFirst,
            depth: laneOpts.levels,
            ranks: st.stacked ? ranksParam(st.stacked, host.runRanks) : '',
            rfold: foldedRanks(st.collapsed),
            area: writtenArea(),
            agroup: host.area.group,
        });
    }

    /** The area the URL holds: the user's, not an operator's flame graph. */
    function writtenArea() {
        return host.area.isOperator ? '' : areaParam(st.area);
    }

    /** @param {Route} r */
    function onRoute(r) {
        if (r.view !== 'run' || r.run !== run.id || r.tab !== 'timeline') return;
        const stacked = stackedRanks(r.ranks, host.runRanks);
        if (String(stacked) !== String(st.stacked) && st.meta) {
            st.stacked = stacked;
            if (host.rankPick) host.rankPick.show(stacked);
            host.newRank();
            return;
        }
        if (!st.stacked && tabRank(run, r) !== st.rank && st.meta) {
            st.rank = tabRank(run, r);
            host.newRank();
            return;
        }
        if (!st.meta) return;
        // changes this view did not make itself (back/forward, a pasted link)
        const rs = r.start === null ? '' : String(r.start);
        const re = r.end === null ? '' : String(r.end);
        const near = (/** @type {string} */ a, /** @type {string} */ b) => a === b || (a !== '' && b !== '' && Math.abs(Number(a) - Number(b)) < 0.002);
        if (!near(rs, st.written.start) || !near(re, st.written.end)) {
            st.written.start = rs;
            st.written.end = re;
            setView(r.start !== null && r.end !== null ? { start: r.start, end: r.end, width: st.view.width } : { ...st.bounds, width: st.view.width });
        }
        if (r.sel !== st.written.sel) {
            st.written.sel = r.sel;
            const ref = parseSel(r.sel);
            if (ref) select(ref, { reveal: true });
            else clearSelection();
        }
        const pinStr = r.pins.join(',');
        if (pinStr !== st.written.pins) {
            st.written.pins = pinStr;
            st.pins = new Set(r.pins);
            relayout();
        }
        if (r.q !== st.written.q) {
            st.written.q = r.q;
            search.setQuery(r.q);
        }
        if (r.cp !== st.written.cp) {
            st.written.cp = r.cp;
            cp.set(r.cp);
        }
        const fold = r.rfold.join(',');
        if (fold !== foldedRanks(st.collapsed).join(',')) {
            st.collapsed = new Set([...[...st.collapsed].filter((k) => !/^rank:\d+$/.test(k)), ...r.rfold.map(rankKey)]);
            relayout();
        }
        let reload = host.area.setGroup(r.agroup);
        if (r.area !== writtenArea()) {
            const a = parseArea(r.area);
            if (!a) {
                host.area.clear();
                reload = false;
            } else {
                st.area = a;
                reload = true;
            }
        }
        if (reload) host.area.load();
        // options write nothing of their own to `written`: the options object holds them
        if (laneOpts.set({ gpuFirst: r.gpufirst, levels: r.depth })) relayout();
    }

    const unsubscribe = store.subscribe((next) => onRoute(tabRoute(next.route, params)));
    return {
        schedule: scheduleUrl,
        destroy() {
            clearTimeout(st.urlTimer);
            unsubscribe();
        },
    };
}

/**
 * The ranks whose group is folded, ascending.
 * @param {Set<string>} collapsed  collapsed group keys
 * @returns {number[]}
 */
export function foldedRanks(collapsed) {
    /** @type {number[]} */
    const out = [];
    for (const k of collapsed) {
        const m = /^rank:(\d+)$/.exec(k);
        if (m) out.push(Number(m[1]));
    }
    return out.sort((a, b) => a - b);
}

// @ts-check
/**
 * app.js — the entry point (index.html loads only this module).
 *
 * Owns the one store ({route}) and the mounted view. The router reports
 * every route; a route with a new identity (routeKey: another page, run or
 * job) unmounts the current view and mounts the view for it, while a route
 * that only changes tabs, rank or filters is just stored, and the mounted
 * view re-renders from its store subscription. Views come from the VIEWS
 * table: adding a page is one module plus one line here.
 *
 * Also reports any unhandled promise rejection as an error toast, so a
 * failed request is never silent, and shows a banner under the header on
 * every page when the server is read-only (/api/health says so and why),
 * and wires the header's theme toggle (theme.js).
 */

import { getHealth } from './api.js';
import { C } from './classes.js';
import { clear, h, toast } from './dom.js';
import { makeRoute, routeKey, startRouter, useViews } from './router.js';
import { createStore } from './state.js';
import { mountThemeToggle } from './theme.js';
import * as compareView from './views/compare.js';
import * as compareNView from './views/comparen.js';
import { VIEW_PARAMS } from './views/index.js';
import * as jobView from './views/job.js';
import * as liveView from './views/live.js';
import * as projectView from './views/project.js';
import * as runView from './views/run.js';
import * as runsView from './views/runs.js';

/**
 * @typedef {object} View
 * @property {(root: HTMLElement, store: import('./state.js').AppStore) => void} mount
 * @property {() => void} unmount
 */

/** @type {Record<import('./router.js').ViewName, View>} */
const VIEWS = { runs: runsView, run: runView, job: jobView, compare: compareView, comparen: compareNView, live: liveView, project: projectView };

const root = document.getElementById('tb-main') || document.body;
/** @type {import('./state.js').AppStore} */
useViews(VIEW_PARAMS); // before the first route is made
const store = createStore({ route: makeRoute() });
/** @type {View | null} */
let view = null;
let key = '';

/** @param {import('./router.js').Route} route */
function show(route) {
    const nextKey = routeKey(route);
    if (nextKey === key && view) {
        store.set({ route });
        return;
    }
    if (view) view.unmount();
    clear(root);
    key = nextKey;
    store.set({ route });
    view = VIEWS[route.view];
    view.mount(root, store);
    window.scrollTo(0, 0);
    for (const a of document.querySelectorAll('.' + C.navLink)) {
        if (!(a instanceof HTMLAnchorElement)) continue;
        if (route.view === 'runs' && a.dataset.nav === 'runs') a.setAttribute('aria-current', 'page');
        else a.removeAttribute('aria-current');
    }
}

window.addEventListener('unhandledrejection', (ev) => {
    const r = ev.reason;
    toast(r instanceof Error ? r.message : String(r), { kind: 'error' });
});

/** Shows the read-only banner when the server says so; a failed health
 * check shows nothing (the pages report their own failures). */
async function showServerState() {
    let health;
    try {
        health = await getHealth();
    } catch {
        return;
    }
    if (!health || !health.read_only) return;
    const banner = h(
        'div',
        { class: C.banner, role: 'status' },
        h('strong', null, 'Read-only: '),
        `${health.reason || 'the data folder cannot be written'}. Stored runs are shown, but uploads, renames and deletes are turned off until the folder can be written and the server is restarted.`,
    );
    root.before(banner);
    // The write controls go with it (CSS under .tb-read-only): what cannot
    // succeed is not offered; the server still refuses it with the reason.
    document.body.classList.add(C.readOnly);
}

const themeButton = document.getElementById('tb-theme-toggle');
if (themeButton instanceof HTMLButtonElement) mountThemeToggle(themeButton);
showServerState();
startRouter(show);

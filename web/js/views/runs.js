// @ts-check
/**
 * views/runs.js — the home page: upload, ingest jobs, the runs table.
 *
 * Sections, top to bottom: a drop zone (drag trace files or pick them;
 * several files of one job become one multi-rank run) with an optional run
 * name and project and the transfer's progress (an upload of files stored
 * already links to their run and offers to store them again); the ingest
 * jobs still under way (or failed recently); a filter box and the filter
 * bar (project, tag, metadata, GPU, dates: views/runfilters.js, applied by
 * the server); the runs table with each run's project and key figures,
 * rename, tags and delete, and a tick box per run: two open the two-run
 * compare ./?compare=A,B (the first ticked is the baseline A), three or
 * more the N-way one; an empty state explaining the three ways to add runs.
 *
 * Data: GET ./api/runs, refreshed every second while a job is queued or
 * running, else every 10 s while the tab is visible (a `--logdir` watcher
 * may add runs). Filters and sort live in the URL (&q=, &sort=, &in=,
 * &tag=, &meta=, &gpu=, &since=, &until=) and change it with replaceState. A refresh never rebuilds the table under an open
 * inline editor; it waits for the editor to close.
 *
 * Lifetime: mount() builds everything and starts the refresh loop;
 * unmount() stops timers, aborts list requests and removes the window-level
 * drag/drop listeners. An upload under way is not cancelled by leaving the
 * page: it finishes in the background and reports itself in a toast (and
 * a beforeunload prompt guards closing the tab until then).
 */

import * as api from '../api.js';
import { C } from '../classes.js';
import { alertBox, bidiText, clear, confirmDialog, h, inlineEditor, progressBar, replace, setTitle, toast } from '../dom.js';
import { DASH, formatAge, formatBytes, formatDate, formatDateTimeUtc, formatNumber, plural } from '../format.js';
import { stringParam } from '../params.js';
import { buildUrl, navigate, routeAs } from '../router.js';
import { FILTER_KEYS, NO_FILTERS, anyFilter, duplicateNotice, emptyState, figureCells, filterBar, filterParams, noMatch, projectCell, projectField, projectUrl } from './runfilters.js';
import {
    ACCEPT,
    PHASES,
    anyActive,
    compareUrl,
    parseMetaList,
    runsQuery,
    filterRuns,
    jobFraction,
    nextSort,
    parseTags,
    sortRuns,
    splitAccepted,
} from '../runlist.js';

/** @typedef {import('../apitypes.js').Run} Run */
/** @typedef {import('../apitypes.js').Job} Job */
/** @typedef {import('../state.js').AppStore} AppStore */

/** Columns the list can be sorted by (URL `sort`, optional "-" prefix). */
export const SORT_KEYS = Object.freeze(['name', 'created', 'ranks', 'gpu', 'bytes', 'events', 'status']);

/**
 * This page's URL parameters: the filter text and the sort
 * ("" = default, "-" prefix = descending).
 */
export const params = Object.freeze({
    q: stringParam('q'),
    sort: /** @type {import('../params.js').Param<string>} */ ({
        key: 'sort',
        type: 'enum',
        default: '',
        parse: (raw) => (raw && SORT_KEYS.includes(raw.replace(/^-/, '')) ? raw : undefined),
        serialize: (v) => v || null,
    }),
    ...filterParams,
});

/** Most runs ticked for one comparison. */
const PICK_MAX = 8;

/** @typedef {import('../router.js').RunsRoute} RunsRoute */

const POLL_ACTIVE_MS = 1000;
const POLL_IDLE_MS = 10000;


/**
 * Runs table columns: key (also the sort key), header, numeric alignment,
 * sortable, and `wide`: hidden on narrow screens.
 * `xwide`: hidden below 1700 px, so the key figures fit.
 * @type {ReadonlyArray<{key: string, label: string, num?: boolean, sort?: boolean, wide?: boolean, xwide?: boolean}>}
 */
const COLUMNS = [
    { key: 'pick', label: 'Compare' },
    { key: 'name', label: 'Name', sort: true },
    { key: 'project', label: 'Project' },
    { key: 'created', label: 'Created', sort: true },
    { key: 'ranks', label: 'Ranks', num: true, sort: true },
    { key: 'step', label: 'Avg step', num: true },
    { key: 'util', label: 'GPU util.', num: true },
    { key: 'steps', label: 'Steps', num: true, xwide: true },
    { key: 'finding', label: 'Top finding' },
    { key: 'gpu', label: 'GPU', sort: true, wide: true },
    { key: 'bytes', label: 'Size', num: true, sort: true, wide: true, xwide: true },
    { key: 'events', label: 'Events', num: true, sort: true, wide: true, xwide: true },
    { key: 'status', label: 'Status', sort: true },
    { key: 'tags', label: 'Tags' },
    { key: 'actions', label: '' },
];

/** @type {{destroy: () => void} | null} */
let active = null;

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 */
export function mount(root, store) {
    unmount();
    active = createRunsPage(root, store);
}

export function unmount() {
    if (active) active.destroy();
    active = null;
}

/**
 * @param {HTMLElement} root
 * @param {AppStore} store
 * @returns {{destroy: () => void}}
 */
function createRunsPage(root, store) {
    setTitle('Runs');
    /** @type {{runs: Run[], jobs: Job[]} | null} */
    let data = null;
    let dataText = '';
    /** @type {Error | null} */
    let loadError = null;
    let editing = false; // an inline editor is open in the table
    let pendingRender = false;
    let destroyed = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let listCtrl = new AbortController();
    /** @type {AbortController | null} */
    let uploadCtrl = null;

    // --- skeleton -------------------------------------------------------
    const nameInput = h('input', {
        class: C.input,
        type: 'text',
        placeholder: 'derived from the file names',
        maxlength: 200,
        autocomplete: 'off',
        spellcheck: 'false',
    });
    const fileInput = h('input', { type: 'file', multiple: true, accept: ACCEPT, class: C.srOnly, tabindex: '-1' });
    const projectInput = projectField();
    const metaInput = projectField('meta', 'batch=32, model=gpt');
    const pickBtn = h('button', { type: 'button', class: [C.btn, C.btnPrimary] }, 'Choose files…');
    const uploadBox = h('div', { class: C.upload, hidden: true });
    const drop = h(
        'section',
        { class: C.drop, 'aria-label': 'Upload trace files' },
        h('div', { class: C.dropTitle }, 'Drop trace files here'),
        h(
            'div',
            { class: C.dropHint },
            'Several files of one job (rank0…rankN) become one multi-rank run. ',
            'Accepted: PyTorch profiler (Kineto) and JAX / TensorFlow trace JSON, plain or gzipped (.json, .json.gz), and Nsight Systems SQLite exports (.sqlite).',
        ),
        h(
            'div',
            { class: C.toolbar },
            pickBtn,
            fileInput,
            h('span', { class: C.muted }, 'or drag them anywhere on this page'),
            h('span', { class: C.spacer }),
            h('label', { class: C.field }, h('span', { class: C.label }, 'Run name (optional)'), nameInput),
            h('label', { class: C.field }, h('span', { class: C.label }, 'Project (optional)'), projectInput),
            h('label', { class: C.field }, h('span', { class: C.label }, 'Metadata'), metaInput),
        ),
        uploadBox,
    );
    const jobsBox = h('section', { class: C.jobs, 'aria-label': 'Imports in progress', hidden: true });
    const filterInput = h('input', {
        class: C.input,
        type: 'search',
        placeholder: 'Filter by name, tag, GPU, file…',
        'aria-label': 'Filter runs',
        value: routeAs(store.get().route, 'runs').q,
        spellcheck: 'false',
    });
    const countText = h('span', { class: C.muted });
    const listBox = h('div', { class: C.section });
    const filterBox = h('div', { class: C.section });
    /** @type {string[]} */
    let projects = [];
    /**
     * Runs ticked for comparison, in the order ticked (at most PICK_MAX:
     * then the other boxes are disabled, so a tick never silently drops one).
     * @type {string[]}
     */
    let picked = [];
    const compareBtn = h('button', { type: 'button', class: [C.btn, C.btnPrimary, C.btnSm], disabled: true, hidden: true, dataset: { action: 'compare' } }, 'Compare');
    compareBtn.addEventListener('click', () => {
        const url = compareUrl(picked);
        if (url) navigate(url);
    });
    /** The tick boxes as picked says; with two ticked the others are disabled and say why. */
    const syncPicks = () => {
        for (const box of listBox.querySelectorAll('tr[data-run] input[type=checkbox]')) {
            const row = box.closest('tr');
            if (!(box instanceof HTMLInputElement && row instanceof HTMLElement)) continue;
            box.checked = picked.includes(row.dataset.run || '');
            box.disabled = !box.checked && picked.length >= PICK_MAX;
            box.title = box.disabled ? `${PICK_MAX} runs are ticked: untick one to compare another` : '';
        }
    };
    const updateCompare = () => {
        compareBtn.disabled = picked.length < 2;
        compareBtn.textContent = picked.length >= 2 ? `Compare ${picked.length} runs` : 'Compare';
        compareBtn.title = picked.length >= 2 ? 'The first ticked run is the baseline' : 'Tick two or more runs to compare them';
        compareBtn.hidden = !data || data.runs.length < 2;
    };
    const toolbar = h('div', { class: C.toolbar }, h('h2', { class: C.sectionTitle }, 'Runs'), countText, h('span', { class: C.spacer }), compareBtn, filterInput);

    replace(root, h('div', { class: C.page }, drop, jobsBox, toolbar, filterBox, listBox));
    listBox.appendChild(h('p', { class: [C.muted, C.loading] }, 'Loading runs…'));

    // --- upload ---------------------------------------------------------
    pickBtn.addEventListener('click', () => fileInput.click());
    fileInput.addEventListener('change', () => {
        const files = Array.from(fileInput.files || []);
        fileInput.value = '';
        if (files.length) startUpload(files);
    });

    /** @param {DragEvent} ev */
    const hasFiles = (ev) => !!ev.dataTransfer && Array.from(ev.dataTransfer.types).includes('Files');
    /** @param {DragEvent} ev */
    const onDragOver = (ev) => {
        if (!hasFiles(ev)) return;
        ev.preventDefault();
        if (ev.dataTransfer) ev.dataTransfer.dropEffect = uploadCtrl ? 'none' : 'copy';
        drop.classList.add(C.dropActive);
    };
    /** @param {DragEvent} ev */
    const onDragLeave = (ev) => {
        if (ev.relatedTarget === null) drop.classList.remove(C.dropActive);
    };
    /** @param {DragEvent} ev */
    const onDrop = (ev) => {
        if (!hasFiles(ev)) return;
        ev.preventDefault(); // never let the browser open the file instead
        drop.classList.remove(C.dropActive);
        const files = Array.from((ev.dataTransfer && ev.dataTransfer.files) || []);
        if (files.length) startUpload(files);
    };
    window.addEventListener('dragover', onDragOver);
    window.addEventListener('dragleave', onDragLeave);
    window.addEventListener('drop', onDrop);

    /** @param {BeforeUnloadEvent} ev */
    const onBeforeUnload = (ev) => {
        ev.preventDefault();
        ev.returnValue = '';
    };

    /**
     * @param {File[]} picked
     * @param {boolean} [again] store files stored already as a new run
     */
    function startUpload(picked, again = false) {
        if (uploadCtrl) {
            toast('An upload is already in progress', { kind: 'error' });
            return;
        }
        const { ok: files, skipped } = splitAccepted(picked);
        if (skipped.length) {
            const names = skipped.slice(0, 3).map((f) => f.name).join(', ') + (skipped.length > 3 ? ', …' : '');
            toast(`Skipped ${plural(skipped.length, 'file')} that ${skipped.length === 1 ? 'is' : 'are'} not .json or .gz: ${names}`, {
                kind: 'error',
            });
        }
        if (!files.length) return;
        const total = files.reduce((s, f) => s + f.size, 0);
        const name = nameInput.value.trim();
        const project = projectInput.value.trim();
        let meta;
        try {
            meta = parseMetaList(metaInput.value);
        } catch (e) {
            toast(e instanceof Error ? e.message : String(e), { kind: 'error' });
            return;
        }
        const ctrl = new AbortController();
        uploadCtrl = ctrl;
        const bar = progressBar('Upload progress');
        bar.set(0);
        const status = h('span', { class: C.muted }, 'Starting…');
        const cancel = h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => ctrl.abort() } }, 'Cancel');
        const list = files.slice(0, 4).map((f) => f.name).join(', ') + (files.length > 4 ? `, and ${files.length - 4} more` : '');
        replace(
            uploadBox,
            h(
                'div',
                { class: C.uploadHead },
                h('strong', null, `Uploading ${plural(files.length, 'file')} (${formatBytes(total)})`),
                h('span', { class: [C.muted, C.mono], title: files.map((f) => f.name).join('\n') }, list),
                h('span', { class: C.spacer }),
                cancel,
            ),
            bar.el,
            status,
        );
        uploadBox.hidden = false;
        pickBtn.disabled = true;
        window.addEventListener('beforeunload', onBeforeUnload);
        const t0 = performance.now();
        api.uploadRun(files, {
            name,
            project,
            meta,
            duplicate: again,
            signal: ctrl.signal,
            onProgress(loaded, tot) {
                const t = tot || total;
                bar.set(t ? loaded / t : null);
                const secs = (performance.now() - t0) / 1000;
                const rate = secs > 0.5 ? ` · ${formatBytes(loaded / secs)}/s` : '';
                const pct = t ? ` (${Math.floor((loaded / t) * 100)} %)` : '';
                status.textContent =
                    loaded >= t && t > 0
                        ? 'Upload complete; waiting for the server to queue the import…'
                        : `${formatBytes(loaded)} of ${formatBytes(t)}${pct}${rate}`;
            },
        }).then(
            (res) => {
                finishUpload();
                nameInput.value = '';
                if (destroyed) {
                    // The user went to another page meanwhile: the upload was kept going.
                    toast(`Upload done: import #${res && res.job} started; see it in the runs list`, { kind: 'ok' });
                    return;
                }
                if (res && typeof res.job === 'number') navigate({ view: 'job', job: res.job });
                else if (res && typeof res.url === 'string' && res.url.startsWith('./')) navigate(res.url);
                else refresh();
            },
            (err) => {
                finishUpload();
                if (destroyed) {
                    toast(`Upload failed: ${err instanceof Error ? err.message : err}`, { kind: 'error' });
                    return;
                }
                if (err instanceof api.ApiError && err.code === 'aborted') {
                    uploadBox.hidden = true;
                    toast('Upload cancelled');
                    return;
                }
                if (err instanceof api.ApiError && err.code === 'duplicate') {
                    replace(uploadBox, duplicateNotice(err, () => startUpload(files, true), () => (uploadBox.hidden = true)));
                    return;
                }
                replace(
                    uploadBox,
                    alertBox(
                        'error',
                        'Upload failed',
                        h('p', null, err instanceof Error ? err.message : String(err)),
                        h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => (uploadBox.hidden = true) } }, 'Dismiss'),
                    ),
                );
            },
        );
    }

    function finishUpload() {
        uploadCtrl = null;
        pickBtn.disabled = false;
        window.removeEventListener('beforeunload', onBeforeUnload);
    }

    // --- data -----------------------------------------------------------
    async function refresh() {
        clearTimeout(timer);
        listCtrl.abort();
        listCtrl = new AbortController();
        try {
            const route = routeAs(store.get().route, 'runs');
            const [next, plist] = await Promise.all([
                api.listRuns(listCtrl.signal, runsQuery(route)),
                api.listProjects(listCtrl.signal).catch(() => ({ projects: [] })),
            ]);
            if (destroyed) return;
            const names = plist.projects.map((p) => p.name);
            if (names.join('\n') !== projects.join('\n')) {
                projects = names;
                renderFilters();
            }
            loadError = null;
            const text = JSON.stringify(next);
            if (text !== dataText) {
                dataText = text;
                data = next;
                render();
            }
        } catch (e) {
            if (destroyed || (e instanceof api.ApiError && e.code === 'aborted')) return;
            loadError = e instanceof Error ? e : new Error(String(e));
            dataText = '';
            render();
        }
        schedule();
    }

    function schedule() {
        if (destroyed) return;
        clearTimeout(timer);
        const busy = !!data && anyActive(data.jobs);
        if (!busy && document.visibilityState === 'hidden') return; // resumed by visibilitychange
        timer = setTimeout(refresh, busy ? POLL_ACTIVE_MS : POLL_IDLE_MS);
    }

    const onVisibility = () => {
        if (document.visibilityState === 'visible') refresh();
    };
    document.addEventListener('visibilitychange', onVisibility);

    // --- rendering ------------------------------------------------------
    function render() {
        renderJobs();
        if (editing) {
            pendingRender = true;
            return;
        }
        pendingRender = false;
        renderList();
    }

    function renderJobs() {
        const jobs = data ? data.jobs : [];
        jobsBox.hidden = jobs.length === 0;
        if (!jobs.length) {
            clear(jobsBox);
            return;
        }
        replace(jobsBox, h('h2', { class: C.sectionTitle }, 'Imports'), jobs.map(jobRow));
    }

    /** @param {Job} j */
    function jobRow(j) {
        const bar = progressBar('Import progress');
        const frac = jobFraction(j);
        bar.set(frac, j.state === 'failed' ? 'error' : 'ok');
        const phase = PHASES.find((p) => p.id === j.phase);
        const stateBadge =
            j.state === 'failed'
                ? badge(C.badgeError, 'failed')
                : j.state === 'done'
                  ? badge(C.badgeOk, 'done')
                  : j.state === 'queued'
                    ? badge(C.badgeNeutral, 'queued')
                    : badge(C.badgeInfo, phase ? phase.label.toLowerCase() : j.phase || 'running');
        const bytes = j.bytes_total > 0 ? `${formatBytes(j.bytes_done)} of ${formatBytes(j.bytes_total)}` : '';
        return h(
            'div',
            { class: C.job },
            h(
                'div',
                { class: C.jobHead },
                stateBadge,
                h('a', { href: buildUrl({ view: 'job', job: j.id }) }, j.name || `Import #${j.id}`),
                h('span', { class: C.spacer }),
                h('span', { class: [C.muted, C.jobMeta] }, [bytes, j.events ? plural(j.events, 'event') : ''].filter(Boolean).join(' · ')),
                j.state === 'done' && j.run_id ? h('a', { href: buildUrl({ view: 'run', run: j.run_id }) }, 'Open run') : null,
            ),
            j.state === 'failed' ? h('div', { class: [C.alert, C.alertError] }, (j.error && j.error.message) || 'The import failed') : bar.el,
        );
    }

    function renderFilters() {
        const route = routeAs(store.get().route, 'runs');
        replace(filterBox, filterBar(route, projects, (patch) => setRoute(patch)));
    }

    function renderList() {
        const route = routeAs(store.get().route, 'runs');
        if (filterInput.value !== route.q && document.activeElement !== filterInput) filterInput.value = route.q;
        if (loadError && !data) {
            countText.textContent = '';
            replace(
                listBox,
                alertBox(
                    'error',
                    'Could not load the runs',
                    h('p', null, loadError.message),
                    h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => refresh() } }, 'Retry'),
                ),
            );
            return;
        }
        if (!data) return;
        const all = data.runs;
        if (all.length === 0 && anyFilter(route)) {
            countText.textContent = '';
            replace(listBox, noMatch(() => setRoute(NO_FILTERS)));
            return;
        }
        if (all.length === 0) {
            countText.textContent = '';
            filterInput.hidden = true;
            replace(listBox, loadError ? staleNote(loadError) : null, emptyState(data.jobs.length > 0));
            return;
        }
        filterInput.hidden = false;
        picked = picked.filter((id) => all.some((r) => r.id === id));
        updateCompare();
        const shown = sortRuns(filterRuns(all, route.q), route.sort);
        const totalBytes = all.reduce((s, r) => s + (r.bytes || 0), 0);
        countText.textContent =
            shown.length === all.length
                ? `${plural(all.length, 'run')} · ${formatBytes(totalBytes)}`
                : `${shown.length} of ${plural(all.length, 'run')}`;
        const now = Date.now() / 1000;
        replace(
            listBox,
            loadError ? staleNote(loadError) : null,
            // the key figures make the table wide: it scrolls in its box at 1280 px
            h('div', { class: C.tableScroll }, h(
                'table',
                { class: [C.table, C.runsTable] },
                h('thead', null, h('tr', null, COLUMNS.map((c) => headerCell(c, route.sort)))),
                h(
                    'tbody',
                    null,
                    shown.length
                        ? shown.map((r) => runRow(r, now))
                        : h(
                              'tr',
                              null,
                              h(
                                  'td',
                                  { colspan: String(COLUMNS.length), class: C.muted },
                                  `No runs match “${route.q}”. `,
                                  h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => setFilter('') } }, 'Clear filter'),
                              ),
                          ),
                ),
            )),
        );
        syncPicks();
    }

    /** @param {Error} err */
    function staleNote(err) {
        return alertBox('warn', 'Lost contact with the server; the list below may be out of date.', err.message);
    }

    /**
     * @param {{key: string, label: string, num?: boolean, sort?: boolean, wide?: boolean, xwide?: boolean}} col
     * @param {string} sort
     */
    function headerCell(col, sort) {
        if (col.key === 'pick') return h('th', { scope: 'col', class: C.cellPick }, h('span', { class: C.srOnly }, col.label));
        if (!col.sort) return h('th', { scope: 'col', class: [col.key === 'actions' && C.cellActions, col.num && C.num, col.xwide && C.colXWide] }, col.label);
        const effective = sort || '-created';
        const asc = effective === col.key;
        const desc = effective === '-' + col.key;
        return h(
            'th',
            {
                scope: 'col',
                class: [col.num && C.num, col.wide && C.colWide, col.xwide && C.colXWide, C.sortable, asc && C.sortedAsc, desc && C.sortedDesc],
                'aria-sort': asc ? 'ascending' : desc ? 'descending' : 'none',
            },
            h(
                'button',
                {
                    type: 'button',
                    title: `Sort by ${col.label.toLowerCase()}`,
                    on: { click: () => setRoute({ sort: nextSort(sort, col.key) }) },
                },
                col.label,
            ),
        );
    }

    /**
     * @param {Run} r
     * @param {number} now unix seconds
     */
    function runRow(r, now) {
        const nameCell = h('td', { class: C.cellGrow });
        const tagsCell = h('td', { class: C.cellTags });
        const showName = () =>
            replace(
                nameCell,
                h(
                    'a',
                    {
                        href: buildUrl({ view: 'run', run: r.id }),
                        title: (r.files || []).map((f) => `rank ${f.rank}: ${bidiText(f.name)} (${formatBytes(f.bytes)})`).join('\n') || r.name,
                    },
                    r.name || r.id,
                ),
            );
        const showTags = () =>
            replace(tagsCell, r.tags && r.tags.length ? h('div', { class: C.chips }, r.tags.map((t) => h('span', { class: C.chip, title: t }, t))) : null);
        showName();
        showTags();

        /** @param {boolean} saved */
        const closeEditor = (saved) => {
            editing = false;
            showName();
            showTags();
            if (pendingRender || saved) render();
            if (saved) refresh();
        };
        const rename = () => {
            if (editing) return;
            editing = true;
            replace(
                nameCell,
                inlineEditor({
                    value: r.name,
                    label: 'New run name',
                    maxLength: 200,
                    onSave: async (v) => {
                        const name = v.trim();
                        if (!name) throw new Error('The name cannot be empty');
                        if (name !== r.name) {
                            await api.updateRun(r.id, { name });
                            r.name = name;
                        }
                    },
                    onClose: closeEditor,
                }),
            );
        };
        const editTags = () => {
            if (editing) return;
            editing = true;
            replace(
                tagsCell,
                inlineEditor({
                    value: (r.tags || []).join(', '),
                    label: 'Tags, separated by commas',
                    placeholder: 'e.g. baseline, bf16',
                    onSave: async (v) => {
                        const tags = parseTags(v);
                        await api.updateRun(r.id, { tags });
                        r.tags = tags;
                    },
                    onClose: closeEditor,
                }),
            );
        };
        const remove = async () => {
            const yes = await confirmDialog({
                title: 'Delete run?',
                body: [
                    h('p', null, 'Delete the run ', h('strong', null, `“${r.name || r.id}”`), ` (${plural(r.ranks, 'rank')}, ${formatBytes(r.bytes)})?`),
                    h('p', { class: C.muted }, 'Its database and stored trace files are removed from the server. This cannot be undone.'),
                ],
                confirmLabel: 'Delete run',
                danger: true,
            });
            if (!yes) return;
            try {
                await api.deleteRun(r.id);
                toast(`Deleted “${bidiText(r.name || r.id)}”`, { kind: 'ok' });
                if (data) data = { ...data, runs: data.runs.filter((x) => x.id !== r.id) };
                dataText = '';
                render();
                refresh();
            } catch (e) {
                toast(`Could not delete “${bidiText(r.name)}”: ${e instanceof Error ? e.message : e}`, { kind: 'error' });
            }
        };

        const files = r.files || [];
        const pick = h('input', { type: 'checkbox', checked: picked.includes(r.id), 'aria-label': `Compare “${r.name || r.id}”` });
        pick.addEventListener('change', () => {
            picked = picked.filter((id) => id !== r.id);
            if (pick.checked && picked.length < PICK_MAX) picked.push(r.id);
            syncPicks();
            updateCompare();
        });
        return h(
            'tr',
            { dataset: { run: r.id } },
            h('td', { class: C.cellPick }, pick),
            nameCell,
            projectCell(r, projectUrl),
            h('td', { class: C.nowrap, title: formatDateTimeUtc(r.created) + ' · ' + formatAge(r.created, now) }, formatDate(r.created)),
            h('td', { class: C.num, title: files.map((f) => `rank ${f.rank}: ${f.name}`).join('\n') }, formatNumber(r.ranks)),
            figureCells(r, buildUrl({ view: 'run', run: r.id, tab: 'analyses' })),
            h('td', { class: [C.cellName, C.colWide], title: r.gpu || 'no GPU recorded' }, r.gpu || DASH),
            h('td', { class: [C.num, C.colWide, C.colXWide] }, formatBytes(r.bytes)),
            h('td', { class: [C.num, C.colWide, C.colXWide] }, formatNumber(r.events)),
            h('td', null, statusBadge(r)),
            tagsCell,
            h(
                'td',
                { class: C.cellActions },
                h('button', { type: 'button', class: [C.btn, C.btnGhost, C.btnSm], title: 'Rename this run', on: { click: rename } }, 'Rename'),
                h('button', { type: 'button', class: [C.btn, C.btnGhost, C.btnSm], title: 'Edit tags', on: { click: editTags } }, 'Tags'),
                h('button', { type: 'button', class: [C.btn, C.btnGhost, C.btnSm, C.btnDanger], title: 'Delete this run', on: { click: remove } }, 'Delete'),
            ),
        );
    }

    /** @param {string} q */
    function setFilter(q) {
        filterInput.value = q;
        setRoute({ q });
    }

    /** @param {Partial<RunsRoute>} patch */
    function setRoute(patch) {
        navigate({ ...routeAs(store.get().route, 'runs'), ...patch }, { replace: true });
    }

    filterInput.addEventListener('input', () => setRoute({ q: filterInput.value }));
    filterInput.addEventListener('keydown', (ev) => {
        if (ev.key === 'Escape' && filterInput.value) setFilter('');
    });

    const unsubscribe = store.subscribe((next, prev) => {
        if (next.route === prev.route || next.route.view !== 'runs') return;
        const a = routeAs(next.route, 'runs'), b = routeAs(prev.route, 'runs');
        if (FILTER_KEYS.some((k) => a[k] !== b[k])) {
            renderFilters();
            refresh(); // the server applies them
        } else if (!editing) renderList();
    });

    renderFilters();
    refresh();

    return {
        destroy() {
            destroyed = true;
            clearTimeout(timer);
            listCtrl.abort();
            // A running upload is not aborted by leaving the page (only by its
            // Cancel button or closing the tab, which beforeunload guards).
            unsubscribe();
            window.removeEventListener('dragover', onDragOver);
            window.removeEventListener('dragleave', onDragLeave);
            window.removeEventListener('drop', onDrop);
            if (!uploadCtrl) window.removeEventListener('beforeunload', onBeforeUnload);
            document.removeEventListener('visibilitychange', onVisibility);
        },
    };
}

/**
 * @param {string} cls
 * @param {string} text
 * @param {string} [title]
 */
function badge(cls, text, title) {
    return h('span', { class: [C.badge, cls], title }, text);
}

/**
 * Status column: damage first, then import notes (they matter most), then the state.
 * @param {Run} r
 */
function statusBadge(r) {
    // a damaged run opens on nothing: say so first (Delete stays on its row)
    if (r.damaged) return badge(C.badgeError, 'damaged', r.damage || 'The stored database of this run is damaged: delete it and upload it again');
    if (r.warnings > 0) {
        return h(
            'a',
            {
                href: buildUrl({ view: 'run', run: r.id, tab: 'info' }),
                class: [C.badge, C.badgeWarn],
                title: 'Some events were repaired or dropped while importing: see the Info tab',
            },
            plural(r.warnings, 'import note'),
        );
    }
    const s = (r.status || 'ready').toLowerCase();
    if (s === 'ready' || s === 'ok' || s === 'done') return badge(C.badgeOk, s);
    if (s === 'failed' || s === 'error') return badge(C.badgeError, s);
    return badge(C.badgeNeutral, s);
}

// @ts-check
/**
 * views/runfilters.js — parts of the runs list that views/runs.js (which
 * owns the page) places: the filter bar, the project and key-figure cells
 * (issue 20), the notice of a duplicate upload, and the empty state.
 *
 * The filter bar edits the route's filter keys (in, tag, meta, gpu, since,
 * until: runlist.RunFilters) through one callback: the URL holds every
 * filter, the page re-reads the list from GET /api/runs with them. The
 * cells read a run's catalog figures; a run stored before the catalog
 * kept them shows dashes until the server has computed them.
 * Everything shown from a run (names, projects, titles) is text through
 * h(), never HTML.
 */

import { C } from '../classes.js';
import { alertBox, copyText, h } from '../dom.js';
import { DASH, formatMicros, formatNumber, formatShare } from '../format.js';
import { stringParam } from '../params.js';
import { buildUrl } from '../router.js';
import { parseMetaFilter } from '../runlist.js';

/** @typedef {import('../apitypes.js').Run} Run */
/** @typedef {import('../runlist.js').RunFilters} RunFilters */

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** The filters' URL parameters (views/runs.js declares them with its own). */
export const filterParams = Object.freeze({
    in: stringParam('in', { max: 400 }),
    tag: stringParam('tag', { max: 64 }),
    meta: stringParam('meta', { max: 1100 }),
    gpu: stringParam('gpu', { max: 100 }),
    since: stringParam('since', { re: DATE_RE }),
    until: stringParam('until', { re: DATE_RE }),
});

/** @type {ReadonlyArray<keyof RunFilters>} */
export const FILTER_KEYS = Object.freeze(['in', 'tag', 'meta', 'gpu', 'since', 'until']);

/**
 * 1 when any filter is set.
 * @param {Partial<RunFilters>} f
 */
export function anyFilter(f) {
    return FILTER_KEYS.some((k) => !!f[k]);
}

/**
 * The filter bar. Text fields apply on Enter or when they lose focus; the
 * project menu and the dates at once.
 * @param {RunFilters} f the route's current values
 * @param {string[]} projects project names for the menu
 * @param {(patch: Partial<RunFilters>) => void} onChange
 * @returns {HTMLElement}
 */
export function filterBar(f, projects, onChange) {
    const names = f.in && f.in !== '-' && !projects.includes(f.in) ? [...projects, f.in] : projects;
    const project = h(
        'select',
        { class: C.select, 'aria-label': 'Project', dataset: { filter: 'in' } },
        h('option', { value: '' }, 'All projects'),
        h('option', { value: '-' }, 'No project'),
        names.map((n) => h('option', { value: n }, n)),
    );
    project.value = f.in;
    project.addEventListener('change', () => onChange({ in: project.value }));
    /**
     * @param {keyof RunFilters} key
     * @param {string} label
     * @param {string} placeholder
     * @param {string} type
     */
    const field = (key, label, placeholder, type = 'text') => {
        const input = h('input', {
            class: C.input, type, placeholder, value: f[key], 'aria-label': label, title: label,
            spellcheck: 'false', autocomplete: 'off', dataset: { filter: key },
        });
        const apply = () => {
            if (input.value.trim() !== f[key]) onChange({ [key]: input.value.trim() });
        };
        input.addEventListener(type === 'date' ? 'change' : 'blur', apply);
        input.addEventListener('keydown', (ev) => {
            if (ev.key === 'Enter') apply();
        });
        return input;
    };
    const meta = field('meta', 'Metadata KEY=VALUE', 'metadata key=value');
    const bad = f.meta && !parseMetaFilter(f.meta);
    if (bad) meta.setAttribute('aria-invalid', 'true');
    const clear = h('button', { type: 'button', class: [C.btn, C.btnSm], disabled: !anyFilter(f), dataset: { action: 'clear-filters' } }, 'Clear filters');
    clear.addEventListener('click', () => onChange(NO_FILTERS));
    return h(
        'div',
        { class: C.toolbar, role: 'group', 'aria-label': 'Filter runs' },
        project,
        field('tag', 'Tag (whole)', 'tag'),
        meta,
        field('gpu', 'GPU name contains', 'GPU'),
        h('label', { class: C.field }, h('span', { class: C.label }, 'From'), field('since', 'Created from (UTC date)', '', 'date')),
        h('label', { class: C.field }, h('span', { class: C.label }, 'to'), field('until', 'Created until (UTC date, included)', '', 'date')),
        clear,
        bad ? h('span', { class: C.muted }, 'Metadata filter: write key=value') : null,
    );
}

/**
 * The project cell: a link to the project page, or "no project".
 * @param {Run} r
 * @param {(project: string) => string} projectUrl
 */
export function projectCell(r, projectUrl) {
    return h(
        'td',
        { class: C.cellFigure },
        r.project ? h('a', { href: projectUrl(r.project), title: `All runs of ${r.project}, their trends` }, r.project) : h('span', { class: C.muted }, 'no project'),
    );
}

/**
 * The key-figure cells: average step (with its step count and the top
 * metadata in the tooltip), GPU utilization, steps, the top finding with
 * its saving.
 * @param {Run} r
 * @param {string} findingUrl the run's Analyses / recommendations link
 * @returns {HTMLElement[]}
 */
export function figureCells(r, findingUrl) {
    const f = r.figures;
    const meta = Object.entries(r.meta || {}).map(([k, v]) => `${k}=${v}`).join('\n');
    const top = f && f.top_finding;
    return [
        h('td', { class: [C.num, C.nowrap], title: [f && f.steps ? `average of ${f.steps} steps` : '', meta].filter(Boolean).join('\n') || null, dataset: { figure: 'avg_step' } }, f ? formatMicros(f.avg_step_us) : DASH),
        h('td', { class: C.num, dataset: { figure: 'gpu_utilization' } }, f ? formatShare(f.gpu_utilization) : DASH),
        h('td', { class: [C.num, C.colXWide], dataset: { figure: 'steps' } }, f && f.steps ? formatNumber(f.steps) : DASH),
        h(
            'td',
            { class: C.cellFigure, dataset: { figure: 'top_finding' } },
            top
                ? h('a', { href: findingUrl, title: top.title }, top.saving_us > 0 ? `save ${formatMicros(top.saving_us)}: ` : '', top.title)
                : h('span', { class: C.muted }, f ? 'no findings' : DASH),
        ),
    ];
}

/**
 * The project page's address.
 * @param {string} project
 */
export function projectUrl(project) {
    return './?project=' + encodeURIComponent(project);
}

/**
 * What an upload of files stored already says: the run they are, and a
 * button to store them again.
 * @param {{details: Record<string, any>}} err
 * @param {() => void} again
 * @param {() => void} dismiss
 */
export function duplicateNotice(err, again, dismiss) {
    const id = String(err.details.run_id || '');
    return alertBox(
        'warn',
        'These files are stored already',
        h('p', null, 'The same trace files were uploaded before: ', h('a', { href: buildUrl({ view: 'run', run: id }), dataset: { duplicateOf: id } }, `open run ${id}`), '.'),
        h(
            'div',
            { class: C.toolbar },
            h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: again } }, 'Upload a second copy'),
            h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: dismiss } }, 'Dismiss'),
        ),
    );
}

/** Every filter off (a route patch). */
export const NO_FILTERS = Object.freeze({ in: '', tag: '', meta: '', gpu: '', since: '', until: '' });

/**
 * What the list says when the filters leave no run.
 * @param {() => void} onClear
 */
export function noMatch(onClear) {
    return h('p', { class: C.muted }, 'No runs match these filters. ', h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: onClear } }, 'Clear filters'));
}

/**
 * A text field of the upload's labels (project, metadata).
 * @param {string} [key] its data-upload name
 * @param {string} [placeholder]
 */
export function projectField(key = 'project', placeholder = 'none') {
    return h('input', { class: C.input, type: 'text', placeholder, maxlength: key === 'project' ? 100 : 4000, autocomplete: 'off', spellcheck: 'false', dataset: { upload: key } });
}

/** Shown in the empty state; the brief's exact command lines. */
const CURL_EXAMPLE = 'curl -H "Authorization: Bearer $TOKEN" -F file=@rank0.pt.trace.json.gz http://127.0.0.1:8080/api/runs';
const LOGDIR_EXAMPLE = 'traceboard serve --logdir DIR';

/**
 * @param {boolean} jobsPending an import is under way, so "no runs" is temporary
 */
export function emptyState(jobsPending) {
    return h(
        'div',
        { class: C.empty },
        h('h3', null, jobsPending ? 'No runs yet: the first import is under way above.' : 'No runs yet'),
        h('p', null, 'Add profiler traces (PyTorch/Kineto or JAX JSON, plain or .gz; Nsight Systems .sqlite) in any of three ways:'),
        h(
            'ol',
            null,
            h(
                'li',
                null,
                h('strong', null, 'Drag the files'),
                ' onto the box above, or choose them with the button. Several files of one job (rank0…rankN) become one multi-rank run.',
            ),
            h('li', null, h('strong', null, 'Upload from a shell'), ' on the machine running the server:', codeLine(CURL_EXAMPLE)),
            h(
                'li',
                null,
                h('strong', null, 'Let the server watch a folder'),
                ' where your training job writes traces (e.g. with ',
                h('code', null, 'torch.profiler.tensorboard_trace_handler'),
                '); new files are imported on their own:',
                codeLine(LOGDIR_EXAMPLE),
            ),
        ),
    );
}

/** @param {string} text */
function codeLine(text) {
    return h(
        'div',
        { class: C.codeRow },
        h('code', { class: C.code }, text),
        h('button', { type: 'button', class: [C.btn, C.btnSm], on: { click: () => copyText(text) } }, 'Copy'),
    );
}

// @ts-check
/**
 * findings.js — the recommendations the server computed for a run (rules.h),
 * rendered as a list: severity, title, the time it could save, the evidence
 * (numbers with units), the advice with its code snippet, a documentation
 * link and a link into the view that shows the evidence.
 *
 * The server orders findings by estimated saving; this module keeps that
 * order. Every string comes from the trace or the catalog and is set as text.
 * A finding's `link` is a run-page query string ("view=kernels&q=…"); it is
 * only used when it looks like one (letters, digits and & = . _ : % -).
 */

import { C } from './classes.js';
import { alertBox, h } from './dom.js';
import { formatMicros, formatShare } from './format.js';

/** @typedef {import('./apitypes.js').Recommendation} Recommendation */

const LINK_RE = /^[A-Za-z0-9_=&.:%-]{1,400}$/;

/** What the evidence link opens, by the view it names. */
const LINK_LABEL = Object.freeze({
    timeline: 'Show on the timeline',
    kernels: 'Show the kernels',
    operators: 'Show the operators',
    memory: 'Show the memory curve',
    ranks: 'Compare the ranks',
    overview: 'Show the overview',
});

/**
 * @param {string} runId
 * @param {string | null | undefined} link
 * @returns {string | null} a relative URL, or null when link is unusable
 */
export function findingHref(runId, link) {
    if (!link || !LINK_RE.test(link)) return null;
    return `./?run=${encodeURIComponent(runId)}&${link}`;
}

/** @param {string | null | undefined} link */
function linkLabel(link) {
    const m = /(?:^|&)view=([a-z]+)/.exec(link || '');
    return (m && LINK_LABEL[/** @type {keyof typeof LINK_LABEL} */ (m[1])]) || 'Show the evidence';
}

/**
 * @param {Recommendation[] | null} recs  null: the run predates the rules
 * @param {{runId: string, stepUs?: number | null, rank?: number | null}} opts
 *        stepUs: the average step, to show a saving as a share of it
 */
export function findingsList(recs, opts) {
    if (recs === null) {
        return alertBox(
            'info',
            'No recommendations for this run',
            'It was imported before traceboard computed recommendations. Upload it again to get them.',
        );
    }
    if (!recs.length) {
        return alertBox(
            'info',
            'Nothing to fix found',
            'No rule of the catalog fired for this rank: no input-bound steps, idle GPU time, unused tensor cores, host syncs, ' +
                'pageable copies, memory pressure or communication problems above their thresholds.',
        );
    }
    return h(
        'ol',
        { class: C.recs, 'aria-label': 'Recommendations' },
        recs.map((r) => finding(r, opts)),
    );
}

/**
 * @param {Recommendation} r
 * @param {{runId: string, stepUs?: number | null, rank?: number | null}} opts
 */
function finding(r, opts) {
    const sevClass = r.severity === 'high' ? C.badgeError : r.severity === 'medium' ? C.badgeWarn : C.badgeInfo;
    const lines = (r.evidence && Array.isArray(r.evidence.lines) ? r.evidence.lines : []).filter((l) => typeof l === 'string');
    const href = findingHref(opts.runId, r.link);
    const saving = typeof r.saving_us === 'number' && r.saving_us > 0 ? r.saving_us : 0;
    const share = saving && opts.stepUs ? saving / opts.stepUs : null;
    return h(
        'li',
        { class: C.rec, dataset: { id: r.id, severity: r.severity } },
        h(
            'div',
            { class: C.recHead },
            h('span', { class: [C.badge, sevClass] }, r.severity),
            h('strong', { class: C.recTitle }, r.title),
            r.rank === null || r.rank === undefined ? h('span', { class: [C.badge, C.badgeNeutral] }, 'whole run') : null,
            r.rank !== null && r.rank !== undefined && opts.rank !== r.rank
                ? h('span', { class: [C.badge, C.badgeNeutral] }, `rank ${r.rank}`)
                : null,
            h('code', { class: C.recId, title: 'Rule id (catalog, config key rules_off)' }, r.id),
        ),
        saving
            ? h(
                  'p',
                  { class: C.recSaving },
                  `Could save about ${formatMicros(saving)} per step`,
                  share !== null ? ` (${formatShare(Math.min(share, 1))} of it)` : '',
              )
            : null,
        lines.length ? h('ul', { class: C.recEvidence }, lines.map((l) => h('li', null, l))) : null,
        r.advice ? h('p', null, h('span', { class: C.muted }, 'What to try: '), r.advice) : null,
        r.snippet ? h('pre', { class: C.code }, h('code', null, r.snippet)) : null,
        h(
            'p',
            { class: C.recLinks },
            href ? h('a', { href }, linkLabel(r.link)) : null,
            r.doc_url && /^https:\/\//.test(r.doc_url)
                ? h('a', { href: r.doc_url, target: '_blank', rel: 'noopener noreferrer' }, 'Documentation')
                : null,
        ),
    );
}

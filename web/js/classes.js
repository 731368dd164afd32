// @ts-check
/**
 * classes.js — every CSS class name the scripts use, in one place.
 *
 * All names carry the `tb-` prefix so they never collide with anything a
 * proxy or extension injects, and css/app.css defines each of them. Scripts
 * write `C.badgeWarn`, never the string, so a rename is one edit here plus
 * one in the stylesheet, and a typo is a type error under checkJs.
 */

export const C = Object.freeze({
    // app frame (written in index.html; app.js marks the current nav link)
    header: 'tb-header',
    brand: 'tb-brand',
    nav: 'tb-nav',
    navLink: 'tb-nav-link',
    main: 'tb-main',

    // page layout
    page: 'tb-page',
    pageHead: 'tb-page-head',
    title: 'tb-title',
    titleRow: 'tb-title-row',
    subtitle: 'tb-subtitle',
    section: 'tb-section',
    sectionTitle: 'tb-section-title',
    toolbar: 'tb-toolbar',
    spacer: 'tb-spacer',
    muted: 'tb-muted',
    mono: 'tb-mono',
    num: 'tb-num',
    srOnly: 'tb-sr-only',
    loading: 'tb-loading',

    // controls
    btn: 'tb-btn',
    btnPrimary: 'tb-btn-primary',
    btnDanger: 'tb-btn-danger',
    btnGhost: 'tb-btn-ghost',
    btnSm: 'tb-btn-sm',
    input: 'tb-input',
    inputSm: 'tb-input-sm',
    field: 'tb-field',
    label: 'tb-label',
    select: 'tb-select',
    inlineEdit: 'tb-inline-edit',

    // tables
    table: 'tb-table',
    tableCompact: 'tb-table-compact',
    sortable: 'tb-sortable',
    sortedAsc: 'tb-sorted-asc',
    sortedDesc: 'tb-sorted-desc',
    cellName: 'tb-cell-name',
    cellGrow: 'tb-cell-grow',
    nowrap: 'tb-nowrap',
    colWide: 'tb-col-wide',
    colExample: 'tb-col-example',
    cellActions: 'tb-cell-actions',
    cellTags: 'tb-cell-tags',
    clickable: 'tb-clickable',
    shareBar: 'tb-share-bar',
    shareTrack: 'tb-share-track',
    shareFill: 'tb-share-fill',

    // badges and chips
    badge: 'tb-badge',
    badgeOk: 'tb-badge-ok',
    badgeWarn: 'tb-badge-warn',
    badgeError: 'tb-badge-error',
    badgeInfo: 'tb-badge-info',
    badgeNeutral: 'tb-badge-neutral',
    chips: 'tb-chips',
    chip: 'tb-chip',

    // progress
    progress: 'tb-progress',
    progressFill: 'tb-progress-fill',
    progressBusy: 'tb-progress-busy',
    progressError: 'tb-progress-error',

    // messages
    alert: 'tb-alert',
    alertError: 'tb-alert-error',
    alertWarn: 'tb-alert-warn',
    alertInfo: 'tb-alert-info',
    alertTitle: 'tb-alert-title',
    toasts: 'tb-toasts',
    toast: 'tb-toast',
    toastError: 'tb-toast-error',
    toastOk: 'tb-toast-ok',
    dialog: 'tb-dialog',
    dialogBody: 'tb-dialog-body',
    dialogActions: 'tb-dialog-actions',

    // runs page
    drop: 'tb-drop',
    dropActive: 'tb-drop-active',
    dropTitle: 'tb-drop-title',
    dropHint: 'tb-drop-hint',
    upload: 'tb-upload',
    uploadHead: 'tb-upload-head',
    jobs: 'tb-jobs',
    job: 'tb-job',
    jobHead: 'tb-job-head',
    jobMeta: 'tb-job-meta',
    empty: 'tb-empty',
    code: 'tb-code',
    codeRow: 'tb-code-row',

    // job page
    steps: 'tb-steps',
    step: 'tb-step',
    stepDone: 'tb-step-done',
    stepCurrent: 'tb-step-current',
    stepFailed: 'tb-step-failed',
    stats: 'tb-stats',
    stat: 'tb-stat',
    statValue: 'tb-stat-value',
    statLabel: 'tb-stat-label',

    // run page
    tabs: 'tb-tabs',
    tab: 'tb-tab',
    tabActive: 'tb-tab-active',
    tabSoon: 'tb-tab-soon',
    cards: 'tb-cards',
    card: 'tb-card',
    cardHead: 'tb-card-head',
    cardTitle: 'tb-card-title',
    cardBody: 'tb-card-body',
    kv: 'tb-kv',
    placeholder: 'tb-placeholder',
    details: 'tb-details',

    // server-side tables (table.js)
    tableBox: 'tb-table-box',
    tableScroll: 'tb-table-scroll',
    busy: 'tb-busy',
    pager: 'tb-pager',
    cellClamp: 'tb-cell-clamp',
    cellStack: 'tb-cell-stack',
    rowTotal: 'tb-row-total',

    // analysis tabs (views/overview.js, operators.js, kernels.js, memory.js)
    grid: 'tb-grid',
    cardPad: 'tb-card-pad',
    help: 'tb-help',
    metrics: 'tb-metrics',
    metric: 'tb-metric',
    metricValue: 'tb-metric-value',
    metricLabel: 'tb-metric-label',
    chart: 'tb-chart',
    axis: 'tb-axis',
    gridLine: 'tb-grid-line',
    bar: 'tb-bar',
    legend: 'tb-legend',
    swatch: 'tb-swatch',
    swatchLine: 'tb-swatch-line',
    swatchDashed: 'tb-swatch-dashed',
    hbar: 'tb-hbar',
    hbarSeg: 'tb-hbar-seg',
    notes: 'tb-notes',
    recs: 'tb-recs',
    rec: 'tb-rec',
    recHead: 'tb-rec-head',
    recTitle: 'tb-rec-title',
    recId: 'tb-rec-id',
    recSaving: 'tb-rec-saving',
    recEvidence: 'tb-rec-evidence',
    recLinks: 'tb-rec-links',
    memChart: 'tb-memchart',
    memCanvas: 'tb-memchart-canvas',
    memSel: 'tb-memchart-sel',
    memHover: 'tb-memchart-hover',
    memTip: 'tb-memchart-tip',
});

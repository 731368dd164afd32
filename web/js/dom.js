// @ts-check
/**
 * dom.js — the few DOM helpers every view uses.
 *
 * Safety rule of the whole front end: text from traces and users (run,
 * file and kernel names are full of `<`, `>`, `&`) only ever reaches the
 * page as text nodes or attribute values. h() has no HTML input at all: it
 * refuses `innerHTML`, inline `on*` attributes and `style` strings (the
 * server's CSP forbids inline handlers and styles anyway), and rejects
 * `javascript:` URLs. Styles are set through element.style or classes.
 * A trace string placed among other text goes in its own element, bdi()
 * or any inline element (app.css isolates them), so that an unclosed
 * U+202E in it cannot reverse the text after it.
 *
 * Toasts live in one container appended to <body> on first use; dialogs
 * are <dialog> elements removed from the page once closed.
 */

import { C } from './classes.js';

/** @typedef {Node | string | number | null | undefined | false | ChildList} Child */
/**
 * Nested children: an array, written as an object type because a JSDoc
 * type alias may not name itself directly (Child[] would).
 * @typedef {{readonly [i: number]: Child, readonly length: number}} ChildList
 */

/**
 * @typedef {object} AttrsBase
 * @property {string | false | null | (string | false | null | undefined)[]} [class]
 * @property {Record<string, EventListener>} [on]   event name -> listener
 * @property {Record<string, string>} [dataset]
 * @property {Partial<Record<'width' | 'height' | 'minWidth' | 'maxWidth' | 'display' | 'color' | 'background', string>>} [style]
 */
/** @typedef {AttrsBase & Record<string, unknown>} Attrs */

/** Keys set as DOM properties rather than attributes. */
const PROPS = new Set(['value', 'checked', 'disabled', 'selected', 'hidden', 'multiple', 'indeterminate']);

/**
 * Creates an element. Children that are strings or numbers become text
 * nodes; null/undefined/false are skipped; arrays are flattened.
 * Attribute values true -> present (""), false/null/undefined -> absent.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
        for (const [key, val] of Object.entries(attrs)) {
            if (val === undefined || val === null || val === false) continue;
            if (key === 'class') {
                addClasses(el, val);
            } else if (key === 'on') {
                for (const [ev, fn] of Object.entries(/** @type {Record<string, EventListener>} */ (val))) {
                    el.addEventListener(ev, fn);
                }
            } else if (key === 'dataset') {
                Object.assign(el.dataset, val);
            } else if (key === 'style') {
                if (typeof val !== 'object') throw new Error('h(): style must be an object (CSP)');
                Object.assign(el.style, val);
            } else if (key === 'innerHTML' || key === 'outerHTML' || /^on/i.test(key)) {
                throw new Error('h(): refusing ' + key);
            } else if (PROPS.has(key)) {
                /** @type {any} */ (el)[key] = val;
            } else {
                const s = val === true ? '' : String(val);
                if ((key === 'href' || key === 'src' || key === 'action') && /^\s*javascript:/i.test(s)) {
                    throw new Error('h(): refusing javascript: URL');
                }
                el.setAttribute(key, s);
            }
        }
    }
    append(el, children);
    return el;
}

/**
 * A trace-derived string (run, file, GPU name …) isolated from the text
 * around it: an unclosed bidi override in it stays inside.
 * @param {string} text
 * @param {Attrs | null} [attrs]
 * @returns {HTMLElement}
 */
export function bdi(text, attrs = null) {
    return h('bdi', attrs, text);
}

/**
 * A trace-derived string isolated inside plain text (a tooltip, a toast, an
 * <option>, the document title), where no element can hold it: wrapped in
 * U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE.
 * @param {string} text
 */
export function bidiText(text) {
    return '\u2068' + text + '\u2069';
}

/**
 * Adds a `class` attribute's classes: a string of names or a list of them
 * (false, null and undefined skipped).
 * @param {Element} el
 * @param {unknown} val
 */
function addClasses(el, val) {
    const list = Array.isArray(val) ? val : [val];
    for (const c of list) if (c) el.classList.add(.../** @type {string} */ (c).split(/\s+/).filter(Boolean));
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Creates an SVG element, with the same safety rules as h(): attributes
 * are set one by one (numbers become strings), `class` takes a list,
 * inline handlers, `style` and HTML are refused; children are nodes or
 * text (a <title> child with text is the element's tooltip).
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number | null | undefined | false | (string | false | null | undefined)[]> | null} [attrs]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function svg(tag, attrs, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    if (attrs) {
        for (const [key, val] of Object.entries(attrs)) {
            if (val === undefined || val === null || val === false) continue;
            if (key === 'class') {
                addClasses(el, val);
            } else if (key === 'style' || key === 'innerHTML' || /^on/i.test(key) || /href$/i.test(key)) {
                throw new Error('svg(): refusing ' + key);
            } else {
                el.setAttribute(key, String(val));
            }
        }
    }
    append(el, children);
    return el;
}

/**
 * Appends children (same rules as h()).
 * @param {Node} parent
 * @param {Child[]} children
 */
export function append(parent, children) {
    for (const c of children) {
        if (c === null || c === undefined || c === false) continue;
        if (Array.isArray(c)) append(parent, c);
        else if (c instanceof Node) parent.appendChild(c);
        else parent.appendChild(document.createTextNode(String(c)));
    }
}

/**
 * Removes every child of el.
 * @param {Node} el
 */
export function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
}

/**
 * Replaces el's children.
 * @param {Node} el
 * @param {...Child} children
 */
export function replace(el, ...children) {
    clear(el);
    append(el, children);
}

/**
 * Sets the window title: setTitle("my run") -> "my run — traceboard", each
 * part inside bidiText() marks.
 * @param {...string} parts
 */
export function setTitle(...parts) {
    // a part may be a run name (bidiText: its overrides stay inside)
    document.title = [...parts.filter(Boolean).map((p) => bidiText(String(p))), 'traceboard'].join(' — ');
}

// --- messages ---------------------------------------------------------------

/**
 * An inline message box. kind "error" is the red box used for failures.
 * @param {'error' | 'warn' | 'info'} kind
 * @param {string} title
 * @param {...Child} body
 * @returns {HTMLDivElement}
 */
export function alertBox(kind, title, ...body) {
    const cls = kind === 'error' ? C.alertError : kind === 'warn' ? C.alertWarn : C.alertInfo;
    return h(
        'div',
        { class: [C.alert, cls], role: kind === 'error' ? 'alert' : 'status' },
        h('div', { class: C.alertTitle }, title),
        body.length ? h('div', null, ...body) : null,
    );
}

/** @type {HTMLDivElement | null} */
let toastBox = null;

/**
 * Shows a transient message in the corner. Errors stay longer and can be
 * dismissed. Returns a function that removes the toast.
 * @param {string} message
 * @param {{kind?: 'info' | 'ok' | 'error', timeout?: number}} [opts]
 * @returns {() => void}
 */
export function toast(message, opts = {}) {
    const kind = opts.kind || 'info';
    if (!toastBox || !toastBox.isConnected) {
        toastBox = h('div', { class: C.toasts, role: 'status', 'aria-live': 'polite' });
        document.body.appendChild(toastBox);
    }
    const close = () => el.remove();
    const el = h(
        'div',
        { class: [C.toast, kind === 'error' && C.toastError, kind === 'ok' && C.toastOk] },
        h('span', null, message),
        h('button', { type: 'button', class: [C.btn, C.btnGhost, C.btnSm], 'aria-label': 'Dismiss', on: { click: close } }, '×'),
    );
    toastBox.appendChild(el);
    const timeout = opts.timeout ?? (kind === 'error' ? 10000 : 4000);
    if (timeout > 0) setTimeout(close, timeout);
    return close;
}

/**
 * A modal yes/no dialog. Resolves true only when the confirm button is
 * pressed; Escape, Cancel and closing resolve false. The cancel button has
 * focus first so Enter never confirms a destructive action by accident.
 * @param {{title: string, body: Child, confirmLabel?: string, danger?: boolean}} opts
 * @returns {Promise<boolean>}
 */
export function confirmDialog(opts) {
    return new Promise((resolve) => {
        const cancel = h('button', { type: 'submit', value: 'cancel', class: C.btn }, 'Cancel');
        const ok = h(
            'button',
            { type: 'submit', value: 'ok', class: [C.btn, opts.danger ? C.btnDanger : C.btnPrimary] },
            opts.confirmLabel || 'OK',
        );
        const dlg = h(
            'dialog',
            { class: C.dialog, 'aria-label': opts.title },
            h(
                'form',
                { method: 'dialog' },
                h('h2', { class: C.sectionTitle }, opts.title),
                h('div', { class: C.dialogBody }, opts.body),
                h('div', { class: C.dialogActions }, cancel, ok),
            ),
        );
        dlg.addEventListener('close', () => {
            resolve(dlg.returnValue === 'ok');
            dlg.remove();
        });
        document.body.appendChild(dlg);
        dlg.showModal();
        cancel.focus();
    });
}

// --- widgets ----------------------------------------------------------------

/**
 * @typedef {object} Progress
 * @property {HTMLDivElement} el
 * @property {(fraction: number | null, state?: 'ok' | 'error') => void} set
 *           fraction in [0, 1]; null = busy with unknown amount (animated)
 */

/**
 * A horizontal progress bar (a div, so width is set through CSSOM, which
 * the CSP allows).
 * @param {string} label accessible name
 * @returns {Progress}
 */
export function progressBar(label) {
    const fill = h('div', { class: C.progressFill });
    const el = h('div', { class: C.progress, role: 'progressbar', 'aria-label': label, 'aria-valuemin': '0', 'aria-valuemax': '100' }, fill);
    return {
        el,
        set(fraction, state = 'ok') {
            el.classList.toggle(C.progressBusy, fraction === null);
            el.classList.toggle(C.progressError, state === 'error');
            if (fraction === null) {
                el.removeAttribute('aria-valuenow');
                fill.style.width = '100%';
                return;
            }
            const pct = Math.max(0, Math.min(1, fraction)) * 100;
            fill.style.width = pct.toFixed(1) + '%';
            el.setAttribute('aria-valuenow', pct.toFixed(0));
        },
    };
}

/**
 * An inline text editor (used for renaming and tags): an input with Save
 * and Cancel. Enter saves, Escape cancels. While onSave's promise is
 * pending the form is disabled; if it rejects, the error is shown as a
 * toast and editing continues. onClose(saved) is called exactly once.
 * @param {{value: string, label: string, placeholder?: string, maxLength?: number,
 *          onSave: (value: string) => Promise<unknown>, onClose: (saved: boolean) => void}} opts
 * @returns {HTMLFormElement}
 */
export function inlineEditor(opts) {
    const input = h('input', {
        class: [C.input, C.inputSm],
        type: 'text',
        value: opts.value,
        placeholder: opts.placeholder,
        maxlength: opts.maxLength,
        'aria-label': opts.label,
        spellcheck: 'false',
    });
    const save = h('button', { type: 'submit', class: [C.btn, C.btnPrimary, C.btnSm] }, 'Save');
    const cancel = h('button', { type: 'button', class: [C.btn, C.btnSm] }, 'Cancel');
    let closed = false;
    /** @param {boolean} saved */
    const close = (saved) => {
        if (closed) return;
        closed = true;
        opts.onClose(saved);
    };
    /** @param {boolean} busy */
    const setBusy = (busy) => {
        input.disabled = busy;
        save.disabled = busy;
        cancel.disabled = busy;
    };
    const form = h('form', { class: C.inlineEdit }, input, save, cancel);
    form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        setBusy(true);
        opts.onSave(input.value).then(
            () => close(true),
            (err) => {
                setBusy(false);
                toast(err instanceof Error ? err.message : String(err), { kind: 'error' });
                input.focus();
            },
        );
    });
    cancel.addEventListener('click', () => close(false));
    input.addEventListener('keydown', (ev) => {
        if (ev.key === 'Escape') {
            ev.preventDefault();
            ev.stopPropagation();
            close(false);
        }
    });
    queueMicrotask(() => {
        input.focus();
        input.select();
    });
    return form;
}

/**
 * Calls fn whenever devicePixelRatio changes (browser zoom, the window
 * moved to another screen), so canvases can be sized again.
 * @param {() => void} fn
 * @returns {() => void} stops it
 */
export function onDprChange(fn) {
    /** @type {MediaQueryList | null} */
    let mq = null;
    const changed = () => {
        watch();
        fn();
    };
    function watch() {
        if (mq) mq.removeEventListener('change', changed);
        mq = window.matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
        mq.addEventListener('change', changed);
    }
    watch();
    return () => {
        if (mq) mq.removeEventListener('change', changed);
    };
}

/**
 * Copies text to the clipboard and says so in a toast.
 * @param {string} text
 */
export function copyText(text) {
    const done = () => toast('Copied to the clipboard', { kind: 'ok', timeout: 2000 });
    const fail = () => toast('Could not copy: select the text and copy it by hand', { kind: 'error' });
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fail);
    else fail();
}

// @ts-check
/**
 * theme.js — light or dark: the toggle in the header, the saved choice and
 * the colours canvases read from the stylesheet.
 *
 * The theme is <html data-theme>, set before the first paint by
 * theme-boot.js with the same rule as themeFor(). An explicit choice (the
 * toggle) is saved in localStorage and wins over the system's preference;
 * without one the page follows prefers-color-scheme as it changes. CSS
 * draws everything from custom properties; canvases (timeline, memory
 * chart) cannot, so they call themedColours() and repaint on onThemeChange().
 * One module-level listener set: the page has one theme.
 */

const KEY = 'tb-theme';
const EVENT = 'tb-themechange';

/**
 * @param {string | null} saved  'light', 'dark' or nothing saved
 * @param {boolean} systemDark
 * @returns {'light' | 'dark'}
 */
export function themeFor(saved, systemDark) {
    return saved === 'dark' || (saved !== 'light' && systemDark) ? 'dark' : 'light';
}

/** @returns {string | null} */
function savedChoice() {
    try {
        return window.localStorage.getItem(KEY);
    } catch {
        return null;
    }
}

/** @returns {'light' | 'dark'} */
export function currentTheme() {
    return document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light';
}

/** @param {'light' | 'dark'} theme */
function apply(theme) {
    if (currentTheme() === theme && document.documentElement.dataset.theme) return;
    document.documentElement.dataset.theme = theme;
    document.dispatchEvent(new CustomEvent(EVENT, { detail: theme }));
}

/**
 * Saves an explicit choice and applies it.
 * @param {'light' | 'dark'} theme
 */
export function setTheme(theme) {
    try {
        window.localStorage.setItem(KEY, theme);
    } catch {
        // not saved: it still applies to this page
    }
    apply(theme);
}

/**
 * Calls fn after every theme change.
 * @param {(theme: 'light' | 'dark') => void} fn
 * @returns {() => void} stops
 */
export function onThemeChange(fn) {
    const l = () => fn(currentTheme());
    document.addEventListener(EVENT, l);
    return () => document.removeEventListener(EVENT, l);
}

/**
 * The defaults with each key overridden by the stylesheet's custom property
 * prefix + key in kebab case (`--tb-tl-` + laneAlt → --tb-tl-lane-alt), where
 * the current theme sets one.
 * @template {Record<string, string>} T
 * @param {T} defaults
 * @param {string} prefix
 * @returns {T}
 */
export function themedColours(defaults, prefix) {
    const style = getComputedStyle(document.documentElement);
    const out = /** @type {Record<string, string>} */ ({ ...defaults });
    for (const k of Object.keys(defaults)) {
        const v = style.getPropertyValue(prefix + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())).trim();
        if (v) out[k] = v;
    }
    return /** @type {T} */ (out);
}

/**
 * Wires the header's toggle button: its label names the theme it switches
 * to, aria-pressed says whether dark is on.
 * @param {HTMLButtonElement} button
 */
export function mountThemeToggle(button) {
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    const label = () => {
        const dark = currentTheme() === 'dark';
        button.textContent = dark ? 'Light theme' : 'Dark theme';
        button.setAttribute('aria-pressed', String(dark));
        button.title = 'Switch to the ' + (dark ? 'light' : 'dark') + ' theme (remembered in this browser)';
    };
    button.addEventListener('click', () => setTheme(currentTheme() === 'dark' ? 'light' : 'dark'));
    onThemeChange(label);
    media.addEventListener('change', () => {
        if (savedChoice() === null) apply(themeFor(null, media.matches));
    });
    apply(themeFor(savedChoice(), media.matches));
    label();
}

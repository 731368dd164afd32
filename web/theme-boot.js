/*
 * theme-boot.js — the one classic script (no module, so outside js/), loaded
 * by index.html in <head> so that it runs before the first paint: it sets
 * <html data-theme="light|dark"> from the choice saved in localStorage
 * ("tb-theme"), else from prefers-color-scheme. Modules run after the first
 * paint, so a dark user would otherwise see a light flash. theme.js owns
 * the toggle, follows the system while no choice is saved, and repeats
 * this rule (themeFor); keep the two in step.
 */
(function () {
    var saved = null;
    try {
        saved = window.localStorage.getItem('tb-theme');
    } catch (e) {
        // storage refused (privacy mode): the system's preference decides
    }
    var dark = saved === 'dark' || (saved !== 'light' && window.matchMedia('(prefers-color-scheme: dark)').matches);
    document.documentElement.setAttribute('data-theme', dark ? 'dark' : 'light');
})();

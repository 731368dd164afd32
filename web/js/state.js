// @ts-check
/**
 * state.js — a tiny observable store.
 *
 * A store holds one plain object. set(patch) shallow-merges the patch and,
 * if any top-level value changed (Object.is), calls every listener with
 * (next, prev). State objects are frozen and replaced, never mutated, so
 * listeners may keep `prev`. A listener added during a notification is first
 * called on the next one; a listener removed during one is not called again
 * (a view unmounted by an earlier listener never sees the new state).
 * app.js keeps the current route here; views read and subscribe to it.
 */

/**
 * @template {object} S
 * @typedef {(next: S, prev: S) => void} Listener
 */

/**
 * @template {object} S
 * @typedef {object} Store
 * @property {() => S} get
 * @property {(patch: Partial<S>) => boolean} set returns whether anything changed
 * @property {(fn: Listener<S>) => () => void} subscribe returns an unsubscribe function
 */

/** @typedef {{route: import('./router.js').Route}} AppState */
/** @typedef {Store<AppState>} AppStore */

/**
 * @template {object} S
 * @param {S} initial
 * @returns {Store<S>}
 */
export function createStore(initial) {
    let state = Object.freeze({ ...initial });
    /** @type {Set<Listener<S>>} */
    const listeners = new Set();
    return {
        get: () => state,
        set(patch) {
            const keys = /** @type {(keyof S)[]} */ (Object.keys(patch));
            if (keys.every((k) => Object.is(state[k], patch[k]))) return false;
            const prev = state;
            state = Object.freeze({ ...state, ...patch });
            for (const fn of [...listeners]) if (listeners.has(fn)) fn(state, prev);
            return true;
        },
        subscribe(fn) {
            listeners.add(fn);
            return () => void listeners.delete(fn);
        },
    };
}

// Tests for web/js/state.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createStore } from '../../web/js/state.js';

test('get returns the initial state, frozen and copied', () => {
    const init = { a: 1, b: 'x' };
    const s = createStore(init);
    assert.deepEqual(s.get(), { a: 1, b: 'x' });
    assert.notEqual(s.get(), init);
    assert.ok(Object.isFrozen(s.get()));
});

test('set merges a patch and notifies with next and prev', () => {
    const s = createStore({ a: 1, b: 2 });
    /** @type {any[]} */
    const calls = [];
    s.subscribe((next, prev) => calls.push([next, prev]));
    assert.equal(s.set({ b: 3 }), true);
    assert.deepEqual(s.get(), { a: 1, b: 3 });
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0][0], { a: 1, b: 3 });
    assert.deepEqual(calls[0][1], { a: 1, b: 2 });
    assert.equal(calls[0][0], s.get());
});

test('set with unchanged values does not notify', () => {
    const obj = { deep: true };
    const s = createStore({ a: 1, o: obj });
    let n = 0;
    s.subscribe(() => n++);
    assert.equal(s.set({ a: 1 }), false);
    assert.equal(s.set({ o: obj }), false);
    assert.equal(s.set({}), false);
    assert.equal(n, 0);
    assert.equal(s.set({ o: { deep: true } }), true, 'a new object is a change (identity, not deep equality)');
    assert.equal(n, 1);
});

test('NaN is equal to itself (Object.is)', () => {
    const s = createStore({ x: NaN });
    let n = 0;
    s.subscribe(() => n++);
    s.set({ x: NaN });
    assert.equal(n, 0);
});

test('unsubscribe stops notifications', () => {
    const s = createStore({ a: 0 });
    let n = 0;
    const off = s.subscribe(() => n++);
    s.set({ a: 1 });
    off();
    off(); // twice is harmless
    s.set({ a: 2 });
    assert.equal(n, 1);
});

test('a listener removed during a notification is not called', () => {
    const s = createStore({ a: 0 });
    /** @type {string[]} */
    const log = [];
    /** @type {() => void} */
    let offSecond = () => {};
    s.subscribe(() => {
        log.push('first');
        offSecond();
    });
    offSecond = s.subscribe(() => log.push('second'));
    s.set({ a: 1 });
    assert.deepEqual(log, ['first']);
});

test('a listener added during a notification waits for the next one', () => {
    const s = createStore({ a: 0 });
    /** @type {string[]} */
    const log = [];
    let added = false;
    s.subscribe(() => {
        log.push('outer');
        if (!added) {
            added = true;
            s.subscribe(() => log.push('inner'));
        }
    });
    s.set({ a: 1 });
    assert.deepEqual(log, ['outer']);
    s.set({ a: 2 });
    assert.deepEqual(log, ['outer', 'outer', 'inner']);
});

test('old states stay intact (replaced, never mutated)', () => {
    const s = createStore({ a: 1 });
    const before = s.get();
    s.set({ a: 2 });
    assert.equal(before.a, 1);
    assert.throws(() => {
        'use strict';
        /** @type {any} */ (s.get()).a = 5;
    }, TypeError);
});

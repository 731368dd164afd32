// Tests for the pure helpers of web/js/table.js — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { effectiveSort, pageInfo, toggleSort } from '../../web/js/table.js';

const isText = (/** @type {string} */ k) => k === 'name' || k === 'op';

test('effectiveSort: the URL wins, else the default in its natural direction', () => {
    assert.deepEqual(effectiveSort({ sort: '', order: '' }, 'device_self', isText), { sort: 'device_self', order: 'desc' });
    assert.deepEqual(effectiveSort({ sort: 'name', order: '' }, 'total', isText), { sort: 'name', order: 'asc' });
    assert.deepEqual(effectiveSort({ sort: 'calls', order: 'asc' }, 'total', isText), { sort: 'calls', order: 'asc' });
    assert.deepEqual(effectiveSort({ sort: '', order: 'asc' }, 'total', isText), { sort: 'total', order: 'asc' });
});

test('toggleSort flips the current column and starts others naturally', () => {
    assert.deepEqual(toggleSort({ sort: 'total', order: 'desc' }, 'total', false), { sort: 'total', order: 'asc' });
    assert.deepEqual(toggleSort({ sort: 'total', order: 'asc' }, 'total', false), { sort: 'total', order: 'desc' });
    assert.deepEqual(toggleSort({ sort: 'total', order: 'desc' }, 'calls', false), { sort: 'calls', order: 'desc' });
    assert.deepEqual(toggleSort({ sort: 'total', order: 'desc' }, 'name', true), { sort: 'name', order: 'asc' });
});

test('pageInfo: rows shown and neighbouring pages', () => {
    assert.deepEqual(pageInfo(0, 100, 53), { from: 1, to: 53, prev: null, next: null });
    assert.deepEqual(pageInfo(0, 100, 250), { from: 1, to: 100, prev: null, next: 100 });
    assert.deepEqual(pageInfo(100, 100, 250), { from: 101, to: 200, prev: 0, next: 200 });
    assert.deepEqual(pageInfo(200, 100, 250), { from: 201, to: 250, prev: 100, next: null });
    assert.deepEqual(pageInfo(50, 100, 250), { from: 51, to: 150, prev: 0, next: 150 }, 'odd offsets from a URL');
    assert.deepEqual(pageInfo(0, 100, 0), { from: 0, to: 0, prev: null, next: null });
    assert.deepEqual(pageInfo(900, 100, 250), { from: 250, to: 250, prev: 149, next: null }, 'past the end');
});

// Tests for web/js/timeline/searchpager.js: every match of a search, paged
// with start = the last match's time, repeats dropped, several sources
// (ranks) merged in time order. Run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createPager, pageStart } from '../../web/js/timeline/searchpager.js';

/** A source over `all` (sorted by ts) answering like /timeline/search: matches at or after `after`, `limit` at most. */
function fake(all, limit, calls = []) {
    return {
        async fetch(after) {
            calls.push(after);
            const from = all.filter((x) => after === null || x.ts_us >= after);
            return { total: from.length, hits: from.slice(0, limit) };
        },
    };
}
const hit = (ts, id, track = 1) => ({ id, track, ts_us: ts, dur_us: 1, name: 'm' });

test('a search pages past the first answer until every match is seen, each once', async () => {
    // 2500 matches, several sharing an instant across a page boundary
    const all = Array.from({ length: 2500 }, (_, i) => hit(Math.floor(i / 3), i + 1));
    const calls = [];
    const p = createPager([fake(all, 1000, calls)], 1000);
    await p.start();
    assert.equal(p.total, 2500);
    assert.equal(p.hits.length, 1000);
    const ids = [];
    for (let i = 0; ; i++) {
        const h = await p.ensure(i);
        if (!h) break;
        ids.push(h.id);
    }
    assert.equal(ids.length, 2500);
    assert.deepEqual(ids, all.map((x) => x.id));
    assert.ok(p.done);
    assert.ok(calls.length >= 3 && calls.length <= 5, `pages asked: ${calls.length}`);
});

test('ranks merge in time order, asking the source with the earliest cursor', async () => {
    const a = Array.from({ length: 25 }, (_, i) => hit(i * 2, 100 + i, 1)); // even times
    const b = Array.from({ length: 25 }, (_, i) => hit(i * 2 + 1, 200 + i, 2)); // odd times
    const p = createPager([fake(a, 10), fake(b, 10)], 10);
    await p.start();
    const ts = [];
    for (let i = 0; i < 50; i++) ts.push((await p.ensure(i)).ts_us);
    assert.deepEqual(ts, Array.from({ length: 50 }, (_, i) => i));
    assert.equal(await p.ensure(50), null);
});

test('a page full of one instant ends its source instead of asking forever', async () => {
    const all = Array.from({ length: 30 }, (_, i) => hit(5, i + 1));
    const calls = [];
    const p = createPager([fake(all, 10, calls)], 10);
    await p.start();
    assert.equal(await p.ensure(15), null);
    assert.ok(p.done);
    assert.ok(calls.length <= 3);
});

test('the next page starts just before the last match, in whole ns', () => {
    for (const ts of [4487462697076.8408, 12.5, 1694128201421205.0004, 0.0005, 7]) {
        const s = pageStart(ts);
        assert.match(s, /^[0-9]+\.[0-9]{3}$/);
        assert.ok(Number(s) <= ts && ts - Number(s) < 0.0025, `${ts} → ${s}`); // as the server parses it
    }
    assert.equal(pageStart(12.5), '12.499');
});

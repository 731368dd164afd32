// Tests for web/js/findings.js's pure part — run with `node --test tests/web/`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { findingHref } from '../../web/js/findings.js';

test('findingHref joins the run and a finding link into a run-page URL', () => {
    assert.equal(findingHref('abc', 'view=kernels&rank=0&group=op&sort=total'), './?run=abc&view=kernels&rank=0&group=op&sort=total');
    assert.equal(
        findingHref('abc', 'view=timeline&rank=2&start=1716199990000330.2&end=1716199990009313.2'),
        './?run=abc&view=timeline&rank=2&start=1716199990000330.2&end=1716199990009313.2',
    );
});

test('findingHref refuses links that are not plain query strings', () => {
    for (const bad of ['javascript:alert(1)', 'view=x"onmouseover=1', 'a b', '//evil.example/x', '', null, undefined, 'x'.repeat(401)]) {
        assert.equal(findingHref('abc', bad), null, String(bad));
    }
});

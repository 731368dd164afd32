// logdata.js: numeric fields (axes left out), the log lane's items and
// synthetic track, counter series per field, metric series by step or by
// time, and labels of lines without text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LOG_COUNTER0, LOG_TRACK, firstLine, lineIndex, logCounters, logItems, metricSeries, numericFields } from '../../web/js/logdata.js';

const L = (id, ts, text, fields = {}) => ({ id, ts_us: ts, text, fields, rank: null });
const lines = [
  L(1, 10, 'start\nsecond line'),
  L(2, 20, '', { step: 1, loss: 2.5, phase: 'train', ok: true }),
  L(3, 30, 'eval', { step: 2, loss: 2.0, acc: 0.5 }),
  L(4, 40, 'bad', { loss: Infinity }),
];

test('numeric fields: first seen order, axes and non-numbers left out', () => {
  assert.deepEqual(numericFields(lines), ['loss', 'acc']);
  assert.deepEqual(numericFields([]), []);
});

test('the lane: one marker per line on a synthetic track', () => {
  const { items, track } = logItems(lines);
  assert.equal(track.id, LOG_TRACK);
  assert.ok(track.id < 0, 'never a server track id');
  assert.equal(track.nslices, 4);
  assert.deepEqual(items[0].ts, [10, 20, 30, 40]);
  assert.deepEqual(items[0].dur, [0, 0, 0, 0]);
  assert.deepEqual(items[0].id, [1, 2, 3, 4]);
  assert.deepEqual(items[0].name, ['start', 'step=1 loss=2.5 phase=train ok=true', 'eval', 'bad']);
  assert.equal(firstLine(L(9, 0, '', {})), '');
});

test('counters: a series per numeric field with the lines that carry it', () => {
  const { defs, series } = logCounters(lines);
  assert.deepEqual(defs.map((d) => [d.id, d.name]), [[LOG_COUNTER0, 'log: loss'], [LOG_COUNTER0 - 1, 'log: acc']]);
  assert.deepEqual(series.get(LOG_COUNTER0).ts, [20, 30]);
  assert.deepEqual(series.get(LOG_COUNTER0).last, [2.5, 2.0]);
  assert.deepEqual(series.get(LOG_COUNTER0 - 1).ts, [30]);
});

test('metric series: by step when every point has one, else by time', () => {
  const s = metricSeries(lines);
  assert.deepEqual(s[0], { name: 'loss', x: 'step', points: [[1, 2.5], [2, 2.0]] });
  const t = metricSeries([L(1, 5, '', { loss: 1 }), L(2, 6, '', { loss: 2, step: 3 })]);
  assert.deepEqual(t[0], { name: 'loss', x: 'time', points: [[5, 1], [6, 2]] });
  assert.equal(lineIndex(lines, 3), 2);
  assert.equal(lineIndex(lines, 99), -1);
  assert.equal(lineIndex(lines, undefined), -1);
});

test('layout: the Job log group comes first, its lane and counters; the server never sees the lane', async () => {
  const L2 = await import('../../web/js/timeline/layout.js');
  const { track } = logItems(lines);
  const { defs } = logCounters(lines);
  const cpu = { id: 1, kind: 'cpu', pid: 1, tid: 1, name: 't', process: 'p', device: null, stream: null, max_depth: 0, nslices: 3 };
  const opts = { pins: new Set(), collapsed: new Set(), showEmpty: false, logs: { track, count: 4, counters: defs } };
  const l = L2.buildLayout([cpu], [], opts);
  assert.deepEqual(l.scroll.map((r) => r.key), ['logs', 't-1', 'c-100', 'c-101', 'cpu:1', 't1']);
  assert.equal(L2.groupSummary(l.scroll[0]), '4 log lines');
  assert.deepEqual(L2.shownTrackIds(l), [1]);
  const closed = L2.buildLayout([cpu], [], { ...opts, collapsed: new Set(['logs']) });
  assert.deepEqual(closed.scroll.map((r) => r.key), ['logs', 'cpu:1', 't1']);
  assert.deepEqual(L2.buildLayout([cpu], [], { ...opts, logs: null }).scroll.map((r) => r.key), ['cpu:1', 't1']);
});

// format.test.mjs: web/js/format.js in node, no browser: the page's one
// format for times, day separators, sizes, round trips and names.
// Dates are made in local time, so the tests hold in any time zone.
// Run: node --test tests/web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ago, clock, dayLabel, hue, humanSize, initial, rttText, shortName, snippet } from '../../web/js/format.js';

const NOW = new Date(2026, 11, 7, 15, 0);   // Dec 7 2026, 15:00 local

test('clock: the time today, the date before, the year in another year', () => {
  assert.equal(clock(new Date(2026, 11, 7, 9, 5).getTime(), NOW), '09:05');
  assert.equal(clock(new Date(2026, 11, 5, 13, 29).getTime(), NOW), 'Dec 5 13:29');
  assert.equal(clock(new Date(2025, 0, 31, 23, 59).getTime(), NOW), 'Jan 31 2025 23:59');
});

test('ago: just now, minutes, hours, then the clock', () => {
  const t = NOW.getTime();
  assert.equal(ago(t - 20e3, t), 'just now');
  assert.equal(ago(t + 5e3, t), 'just now', 'a time ahead of the clock is now');
  assert.equal(ago(t - 3 * 60e3, t), '3 min ago');
  assert.equal(ago(t - 5 * 3600e3, t), '5 h ago');
  assert.equal(ago(new Date(2026, 11, 1, 8, 0).getTime(), t), 'Dec 1 08:00');
});

test('dayLabel: Today, Yesterday, a weekday and date, the year only when not this one', () => {
  assert.equal(dayLabel(new Date(2026, 11, 7, 0, 1).getTime(), NOW), 'Today');
  assert.equal(dayLabel(new Date(2026, 11, 6, 23, 59).getTime(), NOW), 'Yesterday');
  // The first of the month: yesterday is in the month before.
  assert.equal(dayLabel(new Date(2026, 10, 30, 12).getTime(), new Date(2026, 11, 1, 9)), 'Yesterday');
  const earlier = dayLabel(new Date(2026, 10, 3, 12).getTime(), NOW);
  assert.doesNotMatch(earlier, /Today|Yesterday|2026/);
  assert.match(earlier, /3/);
  assert.match(dayLabel(new Date(2025, 10, 3, 12).getTime(), NOW), /2025/);
});

test('humanSize writes sizes as the CLI does', () => {
  assert.equal(humanSize(0), '0 bytes');
  assert.equal(humanSize(512), '512 bytes');
  assert.equal(humanSize(1023), '1023 bytes');
  assert.equal(humanSize(8900), '8.7 KiB');
  assert.equal(humanSize(5 * 1024 * 1024), '5.0 MiB');
  assert.equal(humanSize(3 * 1024 ** 5), '3072.0 TiB', 'TiB is the largest unit');
  assert.equal(humanSize(undefined), '');
  assert.equal(humanSize(NaN), '');
});

test('rttText: tenths under 10 ms, whole above, nothing for no time', () => {
  assert.equal(rttText(0.05), '<0.1 ms');
  assert.equal(rttText(1.234), '1.2 ms');
  assert.equal(rttText(42.6), '43 ms');
  for (const bad of [null, undefined, -1, Infinity, '3']) assert.equal(rttText(bad), '');
});

test('hue is one of eight classes and the same for the same name', () => {
  assert.match(hue('ana'), /^hue[0-7]$/);
  assert.equal(hue('ana'), hue('ana'));
  const seen = new Set(['ana', 'bo', 'cy', 'dee', 'ed', 'flo', 'gus', 'hal'].map(hue));
  assert.ok(seen.size > 1, 'names are told apart');
});

test('snippet puts text on one line and cuts it with an ellipsis', () => {
  assert.equal(snippet('  a\n\tb  c ', 80), 'a b c');
  assert.equal(snippet('abcdefghij', 5), 'abcd…');
  assert.equal(snippet('abcde', 5), 'abcde');
});

test('shortName and initial count characters, not UTF-16 units', () => {
  assert.equal(shortName('😀😀😀😀', 3), '😀😀…');
  assert.equal(shortName('ana', 10), 'ana');
  assert.equal(initial('  émile'), 'É');
  assert.equal(initial('😀x'), '😀');
  assert.equal(initial('   '), '?');
});

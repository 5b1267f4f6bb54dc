// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Open a stkrec flame graph SVG in headless Chromium and check it the way a
 * person would: the frames are there, labels fit their boxes, hover shows
 * details, a click zooms, Ctrl-F searches.
 *
 *   node flame_check.js FILE.svg SHOT.png [--expect NAME]... [--click NAME]
 *                       [--search REGEX]
 *
 * Writes SHOT.png, SHOT-zoom.png and SHOT-search.png after those steps,
 * and SHOT-nojs.png from a second browser with scripts off.
 * Prints one line per check; exits 0 when all pass, 1 on a failed check,
 * 2 on a usage or browser error.
 */
'use strict';

const path = require('path');
const { check, withPage, runChecks } = require('./browser');

const SEARCH_FILL = 'rgb(230,0,230)';

function parseArgs(argv) {
	const a = { expect: [], click: null, search: null };

	if (argv.length < 2)
		throw new Error('usage: flame_check.js FILE.svg SHOT.png [--expect NAME]... [--click NAME] [--search REGEX]');
	a.svg = path.resolve(argv[0]);
	a.png = path.resolve(argv[1]);
	for (let i = 2; i < argv.length; i += 2) {
		const v = argv[i + 1];

		if (v === undefined)
			throw new Error(`${argv[i]} needs a value`);
		if (argv[i] === '--expect')
			a.expect.push(v);
		else if (argv[i] === '--click')
			a.click = v;
		else if (argv[i] === '--search')
			a.search = v;
		else
			throw new Error(`unknown option ${argv[i]}`);
	}
	return a;
}

function shotPath(png, suffix) {
	return png.replace(/(\.png)?$/, `-${suffix}.png`);
}

/* Every frame as the page shows it now. */
function frames(page) {
	return page.$$eval('g.f', gs => gs.map((g, i) => {
		const r = g.querySelector('rect'), t = g.querySelector('text');
		const info = g.querySelector('title').textContent;
		const box = r.getBoundingClientRect();

		return {
			i, info, name: info.slice(0, info.lastIndexOf(' (')),
			text: t.textContent,
			x: parseFloat(r.getAttribute('x')),
			w: parseFloat(r.getAttribute('width')),
			fill: r.getAttribute('fill'),
			shown: getComputedStyle(g).display !== 'none',
			parent: g.classList.contains('parent'),
			textLen: t.textContent ? t.getComputedTextLength() : 0,
			cx: box.x + box.width / 2, cy: box.y + box.height / 2,
		};
	}));
}

function byName(list, name) {
	return list.find(f => f.name === name);
}

async function checkStatic(page, a, W) {
	const fs0 = await frames(page);

	check(fs0.length > 0, `${fs0.length} frames drawn`);
	for (const n of a.expect)
		check(fs0.some(f => f.name === n || f.text === n),
		      `frame "${n}" present`);
	const over = fs0.filter(f => f.text && f.textLen + 3 > f.w + 0.5);
	check(over.length === 0, 'labels fit their boxes' +
	      (over.length ? `: ${over.map(f => f.text).join(', ')}` : ''));
	const root = fs0.find(f => f.name === 'all');
	check(root && Math.abs(root.w - (W - 20)) < 0.01, 'root spans the width');
	return fs0;
}

async function checkHover(page, f) {
	await page.mouse.move(f.cx, f.cy);
	const d = await page.textContent('#details');

	check(d.includes(f.info), `hover shows details "${d.trim()}"`);
}

async function checkZoom(page, a, W, before) {
	const f = byName(before, a.click);

	check(!!f, `frame to click "${a.click}" present`);
	if (!f)
		return;
	await checkHover(page, f);
	await page.mouse.click(f.cx, f.cy);
	const after = await frames(page);
	const z = after[f.i];
	const hidden = after.filter(o => !o.shown).length;
	const parents = after.filter(o => o.parent && o.shown).length;

	check(Math.abs(z.w - (W - 20)) < 0.02 && Math.abs(z.x - 10) < 0.02,
	      `zoomed "${a.click}" spans the width (${z.w})`);
	check(hidden > 0 || before.length === 1 + parents,
	      `zoom hid ${hidden} frames outside "${a.click}"`);
	check(parents > 0, `${parents} ancestors greyed`);
	check(after.every(o => !o.shown || !o.text || o.textLen + 3 <= o.w + 0.5),
	      'zoomed labels fit their boxes');
	check(z.text === a.click || z.name.length > z.text.length,
	      `zoomed label "${z.text}"`);
	check(await page.isVisible('#unzoom'), 'Reset Zoom shown');
	await page.screenshot({ path: shotPath(a.png, 'zoom') });
	await page.click('#unzoom');
	const reset = await frames(page);

	check(reset.every((o, i) => Math.abs(o.w - before[i].w) < 0.02 && o.shown),
	      'Reset Zoom restores every frame');
	check(!(await page.isVisible('#unzoom')), 'Reset Zoom hidden again');
}

async function checkSearch(page, a) {
	const re = new RegExp(a.search);

	page.once('dialog', d => d.accept(a.search));
	await page.keyboard.press('Control+f');
	const list = await frames(page);
	const want = list.filter(f => re.test(f.name));
	const lit = list.filter(f => f.fill === SEARCH_FILL);
	const m = await page.textContent('#matched');

	check(want.length > 0 && lit.length === want.length &&
	      lit.every(f => re.test(f.name)),
	      `search /${a.search}/ highlights ${lit.length} of ${want.length} frames`);
	check(/^Matched: \d+\.\d%$/.test(m.trim()), `search shows "${m.trim()}"`);
	await page.screenshot({ path: shotPath(a.png, 'search') });
	await page.click('#search');	/* "Reset Search" */
	const cleared = await frames(page);
	check(cleared.every(f => f.fill !== SEARCH_FILL), 'Reset Search clears');
}

async function interactive(page, a) {
	const errors = [];

	page.on('pageerror', e => errors.push(e.message));
	await page.goto('file://' + a.svg);
	const W = await page.$eval('svg', s => parseFloat(s.getAttribute('width')));
	const before = await checkStatic(page, a, W);

	check(await page.isVisible('#search'), 'script ran: Search control shown');
	await page.screenshot({ path: a.png });
	if (a.click)
		await checkZoom(page, a, W, before);
	if (a.search)
		await checkSearch(page, a);
	check(errors.length === 0, 'no script errors' +
	      (errors.length ? `: ${errors.join('; ')}` : ''));
}

/* Scripts off: the same picture, no dead controls. */
async function scriptless(page, a) {
	await page.goto('file://' + a.svg);
	const W = await page.$eval('svg', s => parseFloat(s.getAttribute('width')));

	await checkStatic(page, a, W);
	check(!(await page.isVisible('#search')) && !(await page.isVisible('#unzoom')),
	      'without scripts: no Search or Reset Zoom control');
	await page.screenshot({ path: shotPath(a.png, 'nojs') });
}

async function run(a) {
	await withPage(true, page => interactive(page, a));
	await withPage(false, page => scriptless(page, a));
}

runChecks(() => run(parseArgs(process.argv.slice(2))));

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Open a file `stkrec report --speedscope` wrote in speedscope's own page
 * (the speedscope npm package's built viewer) in headless Chromium, as a
 * person would: Browse, pick the file, then look.
 *
 *   node speedscope_check.js FILE.json SHOT.png [--expect PROFILE=FUNCTION]...
 *
 * Checks that the page imports it as a speedscope file without an error,
 * that every PROFILE (a thread's profile name) is offered, and that with
 * PROFILE shown, the Sandwich view lists FUNCTION. Writes SHOT.png (the
 * first profile) and SHOT-N.png (the sandwich of the N-th --expect).
 * Prints one line per check; exits 0 when all pass, 1 on a failed check,
 * 2 on a usage or browser error.
 */
'use strict';

const path = require('path');
const { check, withPage, runChecks } = require('./browser');

const PAGE = path.join(__dirname, 'node_modules/speedscope/dist/release/index.html');

function parseArgs(argv) {
	const a = { expect: [] };

	if (argv.length < 2)
		throw new Error('usage: speedscope_check.js FILE.json SHOT.png [--expect PROFILE=FUNCTION]...');
	a.file = path.resolve(argv[0]);
	a.png = path.resolve(argv[1]);
	for (let i = 2; i < argv.length; i += 2) {
		const v = argv[i + 1] || '', eq = v.lastIndexOf('=');

		if (argv[i] !== '--expect' || eq < 1)
			throw new Error(`bad option ${argv[i]} ${v}`);
		a.expect.push({ profile: v.slice(0, eq), func: v.slice(eq + 1) });
	}
	return a;
}

/* The toolbar's second line, "NAME" or "NAME (i/n)": the profile shown. */
async function shown(page) {
	const line = (await page.locator('body').innerText()).split('\n')[1] || '';
	const m = /^(.*?)(?: \((\d+)\/(\d+)\))?$/.exec(line.trim());

	return m && m[1] ? { name: m[1], i: m[2] ? +m[2] : 1, n: m[3] ? +m[3] : 1 } : null;
}

/* Show the profile named name ('n' steps to the next one). */
async function showProfile(page, name) {
	let s = await shown(page);

	for (let k = 0; s && s.name !== name && k < s.n; k++) {
		await page.keyboard.press('n');
		if (s.i === s.n)	/* at the last one: back to the first */
			for (let j = 1; j < s.n; j++)
				await page.keyboard.press('p');
		s = await shown(page);
	}
	return s && s.name === name;
}

async function run(a) {
	await withPage(true, async page => {
		const errors = [], logs = [];

		page.on('pageerror', e => errors.push(e.message));
		page.on('console', m => {
			logs.push(m.text());
			/* an import that throws is logged, not raised */
			if (m.type() === 'error' || m.text().startsWith('Failed to load'))
				errors.push(m.text().split('\n')[0]);
		});
		await page.goto('file://' + PAGE);
		await page.setInputFiles('input[type=file]', a.file);
		/* loaded, the page is titled after the file's name; failed, it
		 * says "Something went wrong" */
		await page.waitForFunction(() => / - speedscope$/.test(document.title) ||
			document.body.innerText.includes('Something went wrong'));
		check(logs.some(l => l.includes('Importing as speedscope json file')),
		      'imported as a speedscope file');
		const loaded = / - speedscope$/.test(await page.title());
		check(loaded, 'loaded' + (errors.length ? `: ${errors.join('; ')}` : ''));
		if (!loaded)
			return;
		const first = await shown(page);
		check(first !== null, `a profile shown: "${first && first.name}" (1 of ${first && first.n})`);
		await page.screenshot({ path: a.png });
		for (const [n, e] of a.expect.entries()) {
			check(await showProfile(page, e.profile), `profile "${e.profile}" shown`);
			await page.getByText('Sandwich').click();
			/* the table renders after the click: wait for the row */
			const row = await page.waitForFunction(f => document.body.innerText
				.split(/[\t\n]/).some(c => c.trim() === f), e.func, { timeout: 10000 })
				.then(() => true, () => false);
			check(row, `"${e.func}" in its sandwich table`);
			await page.screenshot({ path: a.png.replace(/(\.png)?$/, `-${n + 1}.png`) });
			await page.getByText('Time Order').click();
		}
		check(errors.length === 0, 'no errors' + (errors.length ? `: ${errors.join('; ')}` : ''));
	});
}

runChecks(() => run(parseArgs(process.argv.slice(2))));

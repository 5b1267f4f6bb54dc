// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the browser checks share: headless Chromium with a fresh profile
 * per run, one line per check, and the exit codes (0 all passed, 1 a check
 * failed, 2 a usage or browser error, or the watchdog).
 */
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
	'--no-first-run', '--disable-background-networking',
	'--disable-component-update', '--disable-sync'];

let failed = 0;

function check(ok, what) {
	console.log(`${ok ? 'ok' : 'FAIL'}: ${what}`);
	if (!ok)
		failed++;
}

/* A fresh profile per browser, so no state leaks between runs. */
async function withPage(js, fn) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stkrec-chromium-'));
	let ctx;

	try {
		ctx = await chromium.launchPersistentContext(dir, {
			executablePath: CHROMIUM, headless: true, args: ARGS,
			viewport: { width: 1280, height: 800 },
			javaScriptEnabled: js,
		});
		const page = ctx.pages()[0] || await ctx.newPage();

		page.setDefaultTimeout(30000);	/* a loaded machine */
		await fn(page);
	} finally {
		if (ctx)
			await ctx.close();
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/* Run main(), print the verdict and exit; give up after 170 s. */
function runChecks(main) {
	const watchdog = setTimeout(() => {
		console.log('FAIL: timed out');
		process.exit(2);
	}, 170000);

	main().then(() => {
		clearTimeout(watchdog);
		console.log(failed ? `${failed} checks failed` : 'all checks passed');
		process.exit(failed ? 1 : 0);
	}, e => {
		clearTimeout(watchdog);
		console.log(`ERROR: ${e.message}`);
		process.exit(2);
	});
}

module.exports = { check, withPage, runChecks };

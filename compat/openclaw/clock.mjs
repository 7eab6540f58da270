// Frozen clock for the OpenClaw golden driver, preloaded with `node --import ./clock.mjs`.
//
// Date.now(), `new Date()` and `Date()` return OPENCLAW_GOLDEN_NOW (an ISO instant). Every worker thread started
// afterwards gets this module too: OpenClaw's SQLite workers are created with an explicit `execArgv: []`, and a
// worker does not read NODE_OPTIONS, so the Worker constructor is wrapped to add `--import <this file>`.
// The main thread can move its own clock with globalThis.__openclawGoldenClock.set(ms) (record sequences); workers
// keep the instant they started with, which only feeds SQLite `created_at`.
import { syncBuiltinESMExports } from "node:module";
import workerThreads from "node:worker_threads";

const raw = process.env.OPENCLAW_GOLDEN_NOW;
const parsed = Date.parse(raw ?? "");
if (!Number.isFinite(parsed)) {
	throw new Error(`clock.mjs: OPENCLAW_GOLDEN_NOW must be an ISO instant, got ${JSON.stringify(raw)}`);
}
let frozenMs = parsed;

const RealDate = Date;
class FrozenDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(frozenMs);
		else super(...args);
	}
	static now() {
		return frozenMs;
	}
	static [Symbol.hasInstance](value) {
		return value instanceof RealDate;
	}
}
// `Date()` called without `new` returns a string; a class cannot be called, so a proxy answers that call.
globalThis.Date = new Proxy(FrozenDate, {
	apply() {
		return new RealDate(frozenMs).toString();
	},
});
globalThis.__openclawGoldenClock = {
	now: () => frozenMs,
	set(ms) {
		if (!Number.isFinite(ms)) throw new Error(`clock.mjs: not a time: ${ms}`);
		frozenMs = ms;
	},
};

const selfUrl = import.meta.url;
const RealWorker = workerThreads.Worker;
class FrozenClockWorker extends RealWorker {
	constructor(filename, options = {}) {
		const inherited = options.execArgv ?? process.execArgv;
		const execArgv = inherited.includes(selfUrl) ? inherited : [...inherited, "--import", selfUrl];
		super(filename, { ...options, execArgv });
	}
}
workerThreads.Worker = FrozenClockWorker;
syncBuiltinESMExports();

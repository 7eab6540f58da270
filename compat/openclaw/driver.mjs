// Run OpenClaw 2026.9.6's own short-term recall code (its shipped dist modules) and print what it did, as JSON.
//
//   OPENCLAW_STATE_DIR=<dir> OPENCLAW_GOLDEN_NOW=<iso> TZ=UTC \
//     node --import ./clock.mjs driver.mjs <command> < request.json
//
// Commands: read, rank, promote, sweep, record (on a state DB seeded from the request), and interop-rank,
// interop-promote (on an existing state DB, for the live interop check with the Python engine).
//
// The request is one JSON object:
//   workspaceDir   the workspace (its memory/ notes and MEMORY.md are read and written by OpenClaw)
//   store          optional recall store `{version:1, updatedAt, entries:{key: entry}}`, written to the state DB
//                  before the command, row by row with OpenClaw's writer `writeMemoryCoreWorkspaceEntries`
//                  (values as given, not normalized: the read path is what the goldens check), plus the
//                  `short-term-meta/recall` row when `updatedAt` is a string
//   phaseSignals   optional phase-signal store, written the same way (`short-term-phase-signals`, meta `phase`)
//   options        per-command options (see each command below)
//   steps          `record` only: the recordShortTermRecalls calls, in order
//
// Module files carry hash suffixes (short-term-promotion-CumgJR3X.mjs) and export minified aliases
// (`t as rankShortTermPromotionCandidates`), so each function is found by its name: the dist file whose name starts
// with the given prefix and that defines the function, then the alias that file exports it under.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const HERE = path.dirname(new URL(import.meta.url).pathname);
const DIST = process.env.OPENCLAW_DIST ?? path.resolve(HERE, "../../.cache/openclaw/node_modules/openclaw/dist");

// The CLI's deep-dreaming defaults (resolveMemoryDeepDreamingConfig): `openclaw memory promote` and the nightly sweep.
const DEEP_CONFIG = {
	limit: 10,
	minScore: 0.75,
	minRecallCount: 3,
	minUniqueQueries: 3,
	recencyHalfLifeDays: 14,
	maxAgeDays: 30,
	maxPromotedSnippetTokens: 160,
	maxPriorEntryLossFraction: 0.25,
};

function parseExportList(source) {
	const aliases = new Map();
	for (const match of source.matchAll(/^export\s*\{([^}]*)\}/gm)) {
		for (const part of match[1].split(",")) {
			const [local, exported] = part.trim().split(/\s+as\s+/);
			if (local) aliases.set(local, exported ?? local);
		}
	}
	return aliases;
}

function definesName(source, name) {
	return new RegExp(`(?:^|\\n)\\s*(?:async\\s+)?(?:function\\s*\\*?\\s*${name}\\s*\\(|(?:const|let|var|class)\\s+${name}\\b)`).test(
		source,
	);
}

const sourceCache = new Map();
function distFiles(prefix) {
	return fs
		.readdirSync(DIST)
		.filter((name) => name.startsWith(prefix) && name.endsWith(".mjs"))
		.sort();
}
function readDist(file) {
	if (!sourceCache.has(file)) sourceCache.set(file, fs.readFileSync(path.join(DIST, file), "utf8"));
	return sourceCache.get(file);
}

/** Import `name` from the dist module whose file name starts with `prefix` and that defines it. */
async function locate(prefix, name) {
	const hits = [];
	for (const file of distFiles(prefix)) {
		const source = readDist(file);
		const alias = parseExportList(source).get(name);
		if (alias !== undefined && definesName(source, name)) hits.push({ file, alias });
	}
	if (hits.length !== 1) {
		throw new Error(`driver: expected one ${prefix}*.mjs defining ${name}, found ${JSON.stringify(hits)}`);
	}
	const module = await import(pathToFileURL(path.join(DIST, hits[0].file)).href);
	const value = module[hits[0].alias];
	if (value === undefined) throw new Error(`driver: ${hits[0].file} does not export ${name} as ${hits[0].alias}`);
	return value;
}

async function loadOpenClaw() {
	const names = {
		"short-term-promotion-": [
			"rankShortTermPromotionCandidates",
			"applyShortTermPromotions",
			"repairShortTermPromotionArtifacts",
		],
		"short-term-promotion-record-": ["recordShortTermRecalls"],
		"short-term-promotion-store-": ["readStore", "readShortTermStore", "readPhaseSignalStore"],
		"dreaming-state-": [
			"configureMemoryCoreDreamingState",
			"writeMemoryCoreWorkspaceEntries",
			"writeMemoryCoreWorkspaceEntry",
			"memoryCoreWorkspaceStateKey",
			"SHORT_TERM_RECALL_NAMESPACE",
			"SHORT_TERM_PHASE_SIGNAL_NAMESPACE",
			"SHORT_TERM_META_NAMESPACE",
		],
		"plugin-state-store-": ["createPluginStateKeyedStore", "closePluginStateDatabaseAsync"],
	};
	const oc = {};
	for (const [prefix, wanted] of Object.entries(names)) {
		for (const name of wanted) oc[name] = await locate(prefix, name);
	}
	// What memory-core's register() and the bundled runtime facade do: its keyed stores are plugin-state rows.
	oc.configureMemoryCoreDreamingState((options) => oc.createPluginStateKeyedStore("memory-core", options));
	return oc;
}

function nowMs() {
	return Date.now();
}

function nowIso() {
	return new Date(nowMs()).toISOString();
}

async function seed(oc, request) {
	const workspaceDir = request.workspaceDir;
	const stores = [
		["recall", oc.SHORT_TERM_RECALL_NAMESPACE, request.store],
		["phase", oc.SHORT_TERM_PHASE_SIGNAL_NAMESPACE, request.phaseSignals],
	];
	for (const [kind, namespace, store] of stores) {
		if (!store) continue;
		const entries = Object.entries(store.entries ?? {}).map(([key, value]) => ({ key, value }));
		await oc.writeMemoryCoreWorkspaceEntries({ namespace, workspaceDir, entries });
		if (typeof store.updatedAt === "string") {
			await oc.writeMemoryCoreWorkspaceEntry({
				namespace: oc.SHORT_TERM_META_NAMESPACE,
				workspaceDir,
				key: kind,
				value: { updatedAt: store.updatedAt },
			});
		}
	}
}

function storeAsList(store) {
	return { version: store.version, updatedAt: store.updatedAt, entries: Object.values(store.entries) };
}

/** The recall and phase stores as OpenClaw reads them (normalized, 512 cap), entries in read order. */
async function readNormalized(oc, workspaceDir) {
	const iso = nowIso();
	return {
		recall: storeAsList(await oc.readStore(workspaceDir, iso)),
		phase: storeAsList(await oc.readPhaseSignalStore(workspaceDir, iso)),
	};
}

/** The rows as stored (no normalization), in OpenClaw's read order (created_at, entry_key). */
async function readRaw(oc, workspaceDir) {
	const iso = nowIso();
	return {
		recall: storeAsList(await oc.readShortTermStore(workspaceDir, "recall", iso)),
		phase: storeAsList(await oc.readShortTermStore(workspaceDir, "phase", iso)),
	};
}

function readMemoryFile(workspaceDir) {
	try {
		return fs.readFileSync(path.join(workspaceDir, "MEMORY.md"), "utf8");
	} catch (error) {
		if (error.code === "ENOENT") return null;
		throw error;
	}
}

// The deep config's ranking options, as the CLI and the nightly sweep pass them.
const DEEP_RANK = {
	limit: DEEP_CONFIG.limit,
	minScore: DEEP_CONFIG.minScore,
	minRecallCount: DEEP_CONFIG.minRecallCount,
	minUniqueQueries: DEEP_CONFIG.minUniqueQueries,
	recencyHalfLifeDays: DEEP_CONFIG.recencyHalfLifeDays,
	maxAgeDays: DEEP_CONFIG.maxAgeDays,
};

function rankOptions(options, base) {
	return { ...base, ...(options.rank ?? {}) };
}

/** The CLI's `--apply` ranking: zero gates, no age limit, no limit (the gates are applied by apply). */
async function rankForApply(oc, workspaceDir, options) {
	return await oc.rankShortTermPromotionCandidates({
		workspaceDir,
		nowMs: nowMs(),
		minScore: 0,
		minRecallCount: 0,
		minUniqueQueries: 0,
		recencyHalfLifeDays: options.rank?.recencyHalfLifeDays ?? DEEP_CONFIG.recencyHalfLifeDays,
	});
}

function summarizeApply(result) {
	return {
		applied: result.applied,
		appended: result.appended,
		reconciledExisting: result.reconciledExisting,
		appliedCandidates: result.appliedCandidates.map((candidate) => ({
			key: candidate.key,
			path: candidate.path,
			startLine: candidate.startLine,
			endLine: candidate.endLine,
			snippet: candidate.snippet,
			score: candidate.score,
		})),
		rejectedCandidates: result.rejectedCandidates.map(({ candidate, category, reason }) => ({
			key: candidate.key,
			category,
			reason,
		})),
		compactedSections: result.compactedSections,
		compactedDates: result.compactedDates,
	};
}

function applyOptions(options) {
	return {
		limit: DEEP_CONFIG.limit,
		minScore: DEEP_CONFIG.minScore,
		minRecallCount: DEEP_CONFIG.minRecallCount,
		minUniqueQueries: DEEP_CONFIG.minUniqueQueries,
		maxAgeDays: DEEP_CONFIG.maxAgeDays,
		maxPromotedSnippetTokens: DEEP_CONFIG.maxPromotedSnippetTokens,
		maxPriorEntryLossFraction: DEEP_CONFIG.maxPriorEntryLossFraction,
		...(options.apply ?? {}),
	};
}

const commands = {
	/** The stores after read normalization, as every OpenClaw reader sees them. */
	async read(oc, request) {
		return await readNormalized(oc, request.workspaceDir);
	},

	/** `openclaw memory promote` (no --apply): the deep config's gates and limit, no repair. */
	async rank(oc, request) {
		const options = request.options ?? {};
		const candidates = await oc.rankShortTermPromotionCandidates({
			workspaceDir: request.workspaceDir,
			nowMs: nowMs(),
			...rankOptions(options, DEEP_RANK),
		});
		return { candidates };
	},

	/** `openclaw memory promote --apply`: rank with zero gates and no limit, then apply with the gates and limit. */
	async promote(oc, request) {
		const options = request.options ?? {};
		const workspaceDir = request.workspaceDir;
		const candidates = await rankForApply(oc, workspaceDir, options);
		const result = await oc.applyShortTermPromotions({
			workspaceDir,
			candidates,
			nowMs: nowMs(),
			...applyOptions(options),
		});
		return {
			candidates,
			apply: summarizeApply(result),
			memory: readMemoryFile(workspaceDir),
			store: await readRaw(oc, workspaceDir),
		};
	},

	/** The nightly deep sweep's promotion part: repair, rank with the config, apply with `consolidation`. */
	async sweep(oc, request) {
		const options = request.options ?? {};
		const workspaceDir = request.workspaceDir;
		const repair = await oc.repairShortTermPromotionArtifacts({ workspaceDir });
		const candidates = await oc.rankShortTermPromotionCandidates({
			workspaceDir,
			nowMs: nowMs(),
			...rankOptions(options, DEEP_RANK),
		});
		const logger = { info() {}, warn() {}, error() {}, debug() {} };
		const result = await oc.applyShortTermPromotions({
			workspaceDir,
			candidates,
			nowMs: nowMs(),
			consolidation: { logger },
			...applyOptions(options),
		});
		return {
			repair,
			candidates,
			apply: summarizeApply(result),
			memory: readMemoryFile(workspaceDir),
			store: await readRaw(oc, workspaceDir),
		};
	},

	/** A sequence of recordShortTermRecalls calls; each step may move the clock (`now`). */
	async record(oc, request) {
		const workspaceDir = request.workspaceDir;
		const after = [];
		for (const step of request.steps ?? []) {
			if (step.now) globalThis.__openclawGoldenClock.set(Date.parse(step.now));
			const { now: _now, ...params } = step;
			await oc.recordShortTermRecalls({ workspaceDir, nowMs: nowMs(), ...params });
			after.push(await readRaw(oc, workspaceDir));
		}
		return { steps: after, store: await readRaw(oc, workspaceDir), read: await readNormalized(oc, workspaceDir) };
	},

	/** Rank an existing state DB (no seeding): what OpenClaw sees of a store another writer (Python) wrote. */
	async "interop-rank"(oc, request) {
		const options = request.options ?? {};
		const workspaceDir = request.workspaceDir;
		const candidates = await oc.rankShortTermPromotionCandidates({
			workspaceDir,
			nowMs: nowMs(),
			...rankOptions(options, { minScore: 0, minRecallCount: 0, minUniqueQueries: 0, includePromoted: true }),
		});
		return { candidates, store: await readNormalized(oc, workspaceDir) };
	},

	/** `openclaw memory promote --apply` on an existing state DB, restricted to `keys` when given. */
	async "interop-promote"(oc, request) {
		const options = request.options ?? {};
		const workspaceDir = request.workspaceDir;
		const ranked = await rankForApply(oc, workspaceDir, options);
		const keys = request.keys ? new Set(request.keys) : null;
		const candidates = keys ? ranked.filter((candidate) => keys.has(candidate.key)) : ranked;
		const result = await oc.applyShortTermPromotions({
			workspaceDir,
			candidates,
			nowMs: nowMs(),
			...applyOptions(options),
		});
		return { apply: summarizeApply(result), store: await readNormalized(oc, workspaceDir) };
	},
};

async function readStdin() {
	const chunks = [];
	for await (const chunk of process.stdin) chunks.push(chunk);
	const text = Buffer.concat(chunks).toString("utf8").trim();
	return text ? JSON.parse(text) : {};
}

async function main() {
	const command = process.argv[2];
	if (!Object.hasOwn(commands, command)) {
		throw new Error(`driver: unknown command ${JSON.stringify(command)}; one of ${Object.keys(commands).join(", ")}`);
	}
	if (!process.env.OPENCLAW_STATE_DIR) throw new Error("driver: OPENCLAW_STATE_DIR must be set");
	const request = await readStdin();
	if (!request.workspaceDir) throw new Error("driver: the request needs workspaceDir");
	const oc = await loadOpenClaw();
	if (!command.startsWith("interop-")) await seed(oc, request);
	const output = await commands[command](oc, request);
	await oc.closePluginStateDatabaseAsync();
	// Wait for the pipe to take the whole output: process.exit() would cut an asynchronous pipe write at 64 KiB.
	await new Promise((resolve, reject) =>
		process.stdout.write(`${JSON.stringify(output)}\n`, (error) => (error ? reject(error) : resolve())),
	);
}

main().then(
	() => process.exit(0),
	(error) => {
		process.stderr.write(`${error?.stack ?? error}\n`);
		process.exit(1);
	},
);

// Runs Mastra's real, unmodified createSummarizationScorer (@mastra/evals) against an
// OpenAI-compatible endpoint, one evaluation per {id, source, summary} pair.
//
//   node score.mjs --base-url URL --mode inline|native --model NAME [--api-key KEY]
//                  [--pairs FILE] [--max-questions N]
//
// Pairs: a JSON array or JSONL of {id, source, summary}, from --pairs FILE or stdin.
// Output: one JSON line per pair on stdout, keys sorted recursively so two runs compare byte for
// byte:
//   {"http_requests": N, "id": ..., "requests": [{"method","url","status"}...],
//    "result": <what scorer.run returned, minus the volatile fields listed in "volatile">}
// "http_requests" counts every request the provider's fetch sent for that evaluation (3 expected:
// preprocess, analyze, reason; a 4th would be Mastra's structured-output fallback retry).
// A pair whose evaluation throws prints {"id", "error", "http_requests", "requests"} and the
// script exits 1 after the remaining pairs.
//
// Modes:
//   inline: Mastra's default for an unknown provider: createOpenAICompatible({name, baseURL,
//           includeUsage: true}).chatModel(NAME); the judge's jsonPromptInjection stays 'auto',
//           which resolves to 'inline' (schema appended to the last user message).
//   native: the provider gets supportsStructuredOutputs: true and the scorer's judge
//           jsonPromptInjection = false (set on scorer.config.judge, which the scorer reads at
//           each prompt step), so Mastra sends response_format {type: "json_schema", ...}.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

// No usage telemetry from @mastra/core (it has a PostHog client, off when this is set); the
// packages are imported after setting it.
process.env.MASTRA_TELEMETRY_DISABLED ??= "1";
const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
const { createSummarizationScorer } = await import("@mastra/evals/scorers/prebuilt");

const { values: args } = parseArgs({
  options: {
    "base-url": { type: "string" },
    mode: { type: "string", default: "inline" },
    model: { type: "string" },
    "api-key": { type: "string" },
    pairs: { type: "string" },
    "max-questions": { type: "string" },
    "keep-volatile": { type: "boolean", default: false },
  },
  strict: true,
});

function die(message) {
  process.stderr.write(`score.mjs: ${message}\n`);
  process.exit(2);
}
if (!args["base-url"]) die("--base-url is required");
if (!args.model) die("--model is required");
if (!["inline", "native"].includes(args.mode)) die(`--mode must be inline or native, not ${args.mode}`);

function readPairs() {
  const text = args.pairs ? readFileSync(args.pairs, "utf8") : readFileSync(0, "utf8");
  const trimmed = text.trim();
  if (!trimmed) return [];
  const pairs = trimmed.startsWith("[")
    ? JSON.parse(trimmed)
    : trimmed.split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
  for (const pair of pairs) {
    for (const key of ["id", "source", "summary"]) {
      if (typeof pair[key] !== "string") die(`every pair needs a string "${key}": ${JSON.stringify(pair).slice(0, 200)}`);
    }
  }
  return pairs;
}

// Every request the provider sends goes through this fetch, so the count is exact.
let requests = [];
const countingFetch = async (url, init) => {
  const entry = { method: init?.method ?? "GET", url: String(url), status: null };
  requests.push(entry);
  const response = await fetch(url, init);
  entry.status = response.status;
  return response;
};

const provider = createOpenAICompatible({
  name: "offline-scorer",
  baseURL: args["base-url"],
  includeUsage: true,
  ...(args["api-key"] ? { apiKey: args["api-key"] } : {}),
  ...(args.mode === "native" ? { supportsStructuredOutputs: true } : {}),
  fetch: countingFetch,
});
const model = provider.chatModel(args.model);

function makeScorer() {
  const options = args["max-questions"] ? { maxQuestions: Number(args["max-questions"]) } : {};
  const scorer = createSummarizationScorer({ model, options });
  if (args.mode === "native") {
    // createSummarizationScorer takes no judge options; its judge config is the public
    // scorer.config.judge, read by every prompt step (judge.jsonPromptInjection ?? "auto").
    scorer.config.judge = { ...scorer.config.judge, jsonPromptInjection: false };
  }
  return scorer;
}

// Fields of scorer.run's result that differ from run to run whatever the server answers:
// random ids, wall-clock timings. Dropped from "result" (and named in "volatile") unless
// --keep-volatile.
const VOLATILE_KEYS = new Set(["runId", "durationMs", "startedAt", "finishedAt", "createdAt", "latencyMs", "scoreTraceId", "traceId", "spanId", "timestamp"]);

function stable(value, path, dropped) {
  if (Array.isArray(value)) return value.map((item, i) => stable(item, `${path}[${i}]`, dropped));
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value).sort()) {
      if (value[key] === undefined || typeof value[key] === "function") continue;
      if (!args["keep-volatile"] && VOLATILE_KEYS.has(key)) {
        dropped.add(path ? `${path}.${key}` : key);
        continue;
      }
      out[key] = stable(value[key], path ? `${path}.${key}` : key, dropped);
    }
    return out;
  }
  return value;
}

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
  }
  return value;
}

let failed = 0;
for (const pair of readPairs()) {
  requests = [];
  const scorer = makeScorer();
  // The run shape of the scorer's documented usage example: source as the user message,
  // summary as the assistant's message.
  const run = {
    input: { inputMessages: [{ id: `${pair.id}-source`, role: "user", content: pair.source }] },
    output: [{ id: `${pair.id}-summary`, role: "assistant", content: pair.summary }],
  };
  let line;
  try {
    const result = await scorer.run(run);
    const dropped = new Set();
    const cleaned = stable(result, "", dropped);
    line = sortKeys({ id: pair.id, http_requests: requests.length, requests, result: cleaned, volatile: [...dropped].sort() });
  } catch (error) {
    failed += 1;
    line = sortKeys({ id: pair.id, http_requests: requests.length, requests, error: String(error?.stack ?? error) });
  }
  process.stdout.write(JSON.stringify(line) + "\n");
  process.stderr.write(`score.mjs: ${pair.id}: ${requests.length} HTTP request(s)\n`);
}
process.exit(failed ? 1 : 0);

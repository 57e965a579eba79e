// One HTTP call to the Delivery API with the spec's retry policy (Errors > Retry policy (client
// side)). Written from the spec alone; only Node's built-in fetch.

export const PROFILES = {
  // a viewer is waiting: playback, config
  interactive: { base: 0.5, cap: 8, attemptTimeout: 8, maxRetries: 3, total: 15 },
  // syncs and downloads
  background: { base: 1, cap: 30, attemptTimeout: 15, maxRetries: 5, total: 120 },
};

export class CallFailed extends Error {
  // kind: "refused" (an answer not to retry now), "exhausted" (retries, time or budget ran
  // out), "unreadable" (not the JSON the endpoint promises)
  constructor(kind, message, status = null, code = null) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.code = code;
  }
}

const seconds = () => performance.now() / 1000;
export const pause = (s) => new Promise((resolve) => setTimeout(resolve, Math.max(0, s) * 1000));

// Retries across the whole process: at most 10 % of the last minute's requests, never fewer
// than 10 a minute.
class RetryLedger {
  constructor() {
    this.requests = [];
    this.retries = [];
  }

  forget(now) {
    const since = now - 60;
    this.requests = this.requests.filter((t) => t > since);
    this.retries = this.retries.filter((t) => t > since);
  }

  request(now) {
    this.requests.push(now);
  }

  allows(now) {
    this.forget(now);
    const allowed = Math.max(10, Math.floor(0.1 * (this.requests.length + 1)));
    return this.retries.length + 1 <= allowed;
  }

  retry(now) {
    this.retries.push(now);
  }
}

export const ledger = new RetryLedger();

// The machine code of an error answer: flat `error_code`, envelope `code`.
export function errorCode(json) {
  if (!json || typeof json !== "object") return null;
  if (typeof json.error_code === "string") return json.error_code;
  if (typeof json.code === "number" && json.code !== 0) return json.code;
  return null;
}

function retryAfter(headers) {
  const value = headers.get("retry-after");
  if (value === null) return null;
  const number = Number(value);
  return Number.isFinite(number) && number >= 0 ? number : null;
}

// What to do with an answer: "ok", "retry" or "refuse".
function decide(status, json) {
  if (status < 400) return "ok";
  if (status === 429) return "retry";
  if (status === 503 && errorCode(json) === "not_ready") return "refuse";
  if (status >= 500) return "retry";
  return "refuse";
}

function parse(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class Api {
  constructor({ baseUrl, apiKey, apiVersion = null, log = () => {} }) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.apiKey = apiKey;
    this.apiVersion = apiVersion;
    this.log = log;
  }

  endpoint(path, query = {}) {
    const url = new URL(`${this.baseUrl}/api/delivery/v1/${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  headers(withKey, hasBody) {
    const headers = { Accept: "application/json", "User-Agent": "partner-node/1.0" };
    if (withKey) headers.Authorization = `Bearer ${this.apiKey}`;
    if (hasBody) headers["Content-Type"] = "application/json";
    if (this.apiVersion) headers["Service-Version"] = this.apiVersion;
    return headers;
  }

  // Returns { status, headers, json, bytes }; throws CallFailed.
  async call(method, url, options = {}) {
    const { body, profile = "background", withKey = true, binary = false, label } = options;
    const policy = PROFILES[profile];
    const name = label ?? `${method} ${new URL(url).pathname}`;
    const started = seconds();
    for (let attempt = 0; ; attempt++) {
      ledger.request(seconds());
      let status = null;
      let headers = null;
      let json = null;
      let bytes = null;
      let problem = null;
      try {
        const response = await fetch(url, {
          method,
          headers: this.headers(withKey, body !== undefined),
          body: body === undefined ? undefined : JSON.stringify(body),
          redirect: "manual",
          signal: AbortSignal.timeout(policy.attemptTimeout * 1000),
        });
        status = response.status;
        headers = response.headers;
        if (binary && status === 200) {
          bytes = Buffer.from(await response.arrayBuffer());
        } else {
          json = parse(await response.text());
        }
      } catch (error) {
        problem = error.name === "TimeoutError" ? "no answer in time" : "connection failed";
      }
      let wait;
      if (problem === null) {
        const next = decide(status, json);
        if (next === "ok") {
          if (json === undefined && status < 300) {
            throw new CallFailed("unreadable", `${name}: answer ${status} is not JSON`, status);
          }
          return { status, headers, json, bytes };
        }
        if (next === "refuse") {
          const code = errorCode(json);
          throw new CallFailed("refused", `${name}: ${status} ${code ?? ""}`.trim(), status, code);
        }
        const after = retryAfter(headers);
        problem = `answer ${status}`;
        wait = after !== null ? after + Math.random() : undefined;
      }
      if (wait === undefined) {
        wait = Math.random() * Math.min(policy.cap, policy.base * 2 ** attempt);
      }
      const elapsed = seconds() - started;
      if (attempt >= policy.maxRetries) {
        throw new CallFailed("exhausted", `${name}: ${problem}; ${attempt} retries made`, status);
      }
      if (elapsed + wait >= policy.total) {
        throw new CallFailed("exhausted", `${name}: ${problem}; no time left to retry`, status);
      }
      if (!ledger.allows(seconds())) {
        throw new CallFailed("exhausted", `${name}: ${problem}; retry budget spent`, status);
      }
      this.log(`${name}: ${problem}, retrying in ${wait.toFixed(2)} s`);
      await pause(wait);
      ledger.retry(seconds());
    }
  }

  get(path, query, options = {}) {
    return this.call("GET", this.endpoint(path, query), options);
  }
}

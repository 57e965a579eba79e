// Playback tickets (POST /playback): one episode, or a batch of up to 3 (form A, `episodes`).
// In a batch only the failed items are sent again, each after its own retry_after.
import { CallFailed, ledger, pause, PROFILES } from "./transport.mjs";

export const BATCH_MAX = 3;
const policy = PROFILES.interactive;
const seconds = () => performance.now() / 1000;

function retryItem(status, code) {
  if (status === 429) return true;
  if (status === 503 && code === "not_ready") return false; // try again on the next play
  return status >= 500;
}

// What may be shown of a ticket: never the token nor the manifest link.
function describeTicket(episodeId, answer) {
  return {
    episode_id: answer.episode_id ?? episodeId,
    episode_no: answer.episode_no ?? null,
    kind: answer.play_auth_token ? "play token" : answer.manifest_url ? "manifest link" : "unknown",
    protection: answer.protection ?? null,
    expires_at: answer.expires_at ?? null,
    // paid episodes are sold only on a private-encrypted ticket
    sellable: answer.protection === "private-encrypted",
    subtitles: (answer.subtitles ?? []).map((s) => s.lang),
  };
}

function refusal(episodeId, status, body) {
  return {
    episode_id: episodeId,
    status,
    code: body?.error_code ?? null,
    reason: body?.reason ?? null,
  };
}

// A per-ticket refusal of a single request (the request itself was fine).
const PER_TICKET = new Set([403, 404, 409, 503]);

export async function requestTickets(api, episodeIds, device, log) {
  const url = api.endpoint("playback");
  const base = { ...device };
  if (episodeIds.length === 1) {
    try {
      const answer = await api.call("POST", url, {
        body: { episode_id: episodeIds[0], intent: "play", ...base },
        profile: "interactive",
      });
      return { tickets: [describeTicket(episodeIds[0], answer.json)], refused: [] };
    } catch (error) {
      if (error instanceof CallFailed && error.kind === "refused" && PER_TICKET.has(error.status)) {
        return { tickets: [], refused: [{ episode_id: episodeIds[0], status: error.status, code: error.code, reason: null }] };
      }
      throw error;
    }
  }
  const items = episodeIds.map((id, index) => ({ id, intent: index === 0 ? "play" : "prefetch", tries: 0, due: 0 }));
  const tickets = [];
  const refused = [];
  const started = seconds();
  let pending = items;
  while (pending.length > 0) {
    const now = seconds();
    const ready = pending.filter((item) => item.due <= now);
    if (ready.length === 0) {
      await pause(Math.min(...pending.map((item) => item.due)) - now);
      continue;
    }
    const answer = await api.call("POST", url, {
      body: { episodes: ready.map((item) => ({ episode_id: item.id, intent: item.intent })), intent: "play", ...base },
      profile: "interactive",
    });
    const results = answer.json?.items;
    if (!Array.isArray(results) || results.length !== ready.length) {
      throw new CallFailed("unreadable", "playback: the batch answer has no item per episode asked");
    }
    const answeredAt = seconds();
    const again = [];
    ready.forEach((item, index) => {
      const result = results[index];
      const status = Number(result?.status);
      if (status === 200) {
        tickets.push(describeTicket(item.id, result));
        return;
      }
      const code = result?.error_code ?? null;
      item.tries += 1;
      if (!retryItem(status, code) || item.tries > policy.maxRetries) {
        refused.push(refusal(item.id, status, result));
        return;
      }
      const wait = typeof result.retry_after === "number"
        ? result.retry_after + Math.random()
        : Math.random() * Math.min(policy.cap, policy.base * 2 ** (item.tries - 1));
      if (answeredAt + wait - started >= policy.total || !ledger.allows(answeredAt)) {
        refused.push(refusal(item.id, status, result));
        return;
      }
      log(`playback: item ${item.id} answered ${status}, sent again in ${wait.toFixed(2)} s`);
      ledger.retry(answeredAt);
      item.due = answeredAt + wait;
      again.push(item);
    });
    pending = [...pending.filter((item) => !ready.includes(item)), ...again];
  }
  return { tickets, refused };
}

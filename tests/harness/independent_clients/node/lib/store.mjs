// The partner's state: one JSON file, replaced as a whole (write a sibling, then rename), so a
// sync that fails or is killed leaves the previous state.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

export const STATE_VERSION = 1;

export function emptyState() {
  return {
    version: STATE_VERSION,
    catalog: { walks: 0, films: {} },
    creatives: { cursorSince: null, items: [] },
    series: {},
    playlists: {},
  };
}

export class StateFileError extends Error {}

export function loadState(path) {
  if (!existsSync(path)) return emptyState();
  let data;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new StateFileError(`state file ${path} cannot be read: ${error.message}`);
  }
  return { ...emptyState(), ...data };
}

export function saveState(path, state) {
  const scratch = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(scratch, JSON.stringify(state));
    renameSync(scratch, path);
  } catch (error) {
    throw new StateFileError(`state file ${path} cannot be written: ${error.message}`);
  }
}

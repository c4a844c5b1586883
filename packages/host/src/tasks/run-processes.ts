import { readdirSync, readFileSync } from 'node:fs';

/**
 * Finds the processes a run started and signals their process groups. Commands of a run carry
 * `FENGYU_RUN_ID=<runId>` in their environment (children inherit it, also those that left the
 * command's process group), so the process table is the record of what the run started.
 * Linux reads `/proc`; elsewhere nothing is found and only the cooperative cancel applies.
 */

function environ(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined;
  }
}

function groupOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // pid (comm) state ppid pgrp …; comm may contain spaces and parentheses
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgrp = Number(rest[2]);
    return Number.isInteger(pgrp) && pgrp > 0 ? pgrp : undefined;
  } catch {
    return undefined;
  }
}

/** Process ids whose environment names the run. */
export function runProcesses(runId: string): number[] {
  if (!/^[A-Za-z0-9-]+$/.test(runId)) return [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  const marker = `FENGYU_RUN_ID=${runId}\0`;
  const self = String(process.pid);
  return pids.filter((pid) => pid !== self && environ(pid)?.includes(marker)).map(Number);
}

/** Sends `signal` to each process of the run and to its process group; returns how many processes were found. */
export function signalRunProcesses(runId: string, signal: 'SIGTERM' | 'SIGKILL'): number {
  const pids = runProcesses(runId);
  const groups = new Set<number>();
  const ownGroup = groupOf(String(process.pid));
  for (const pid of pids) {
    const g = groupOf(String(pid));
    // Never the host's own group: only groups the run's commands lead.
    if (g !== undefined && g !== process.pid && g !== ownGroup && g > 1) groups.add(g);
  }
  for (const g of groups) {
    try {
      process.kill(-g, signal);
    } catch {
      /* the group is gone */
    }
  }
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
  return pids.length;
}

// convmem for DeepSeek Harness 0.2: a dependency-free plugin file (node builtins only).
//
// DSH loads this file by absolute path from a profile patch written by
// `convmem install dsh`:
//
//   - insert:
//       - id: convmem
//         name: /abs/path/to/dsh_plugin.mjs
//         config: {command: [/abs/python, -m, convmem, serve, dsh], home: /abs/data/dir}
//
// It starts ONE long-lived `convmem serve dsh` child and speaks JSON Lines to it
// ({id, op, ...} -> {id, ok, ...}; the ops are documented in convmem/adapters/dsh.py):
//
//   agent/created      -> session_start   (durable: queued and resent until acknowledged)
//   session/event      -> events          (durable; batched per event-loop turn)
//   agent/pre-step     -> pre_step        (after `await next()`; deadline preStepTimeoutMs)
//   tools/pre-execute  -> pre_execute     (deadline preExecuteTimeoutMs; deny or next())
//   agent/turn-stopping-> turn_stopping   (a blocked reply: a repair step in the same turn)
//   /memory command    -> command         (status | explain | inspect ID | search WORDS)
//
// Fail open: if the child is missing, dead or slower than the deadline, the step
// or tool call goes on without memory; the child is restarted on next use (with
// backoff). Events sent while it is down stay queued (bounded) and are resent;
// the Python side also re-reads the session log, so nothing is lost for good.
// The child and its pipes are unref()'d so `dsh headless` can exit after a turn.
//
// `/memory` cannot run headless in DSH 0.2.1. A registered command executes only through
// the remote method `commands/execute(agentId, line, attachments)`, which the TUI and web
// clients call. `dsh --profile P "task"` (headless) puts the task into the agent's inbox as
// an ordinary user message, so "/memory status" reaches the model as plain text, and the
// SDK runtime answers only initialize, session/prompt, session/resume, session/wait,
// session/working-directory/get|set and shutdown (anything else: "unknown DeepSeek Harness
// SDK runtime method"). Headless users run the same reports with `convmem status`,
// `convmem explain`, `convmem inspect ID` and `convmem search WORDS`.
//
// Never JSON.stringify a payload, agent or exec object: they hold cordis context
// proxies that throw on property access ("cannot get property ... without inject").
// Only plain fields (ids, numbers, message content, tool arguments) are copied.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const name = 'convmem';
// Optional: without the commands service the plugin still captures and injects.
export const inject = { commands: { required: false } };

const SOURCE_KIND = 'convmem';
const BLOCK_MARKER = '[convmem memory]';
const USER_KINDS = new Set(['user', 'input', 'prompt', 'steer']);
// Event types whose data the Python side reads (messages, tools, compaction, commands,
// turn and step numbers): their data is forwarded, slimmed.
// For every other type only {type, seq, time} goes over, to keep seq gaps visible.
const DATA_TYPES = new Set([
  'user/message', 'assistant/message', 'system/message', 'tool/call', 'tool/result',
  'compaction/start', 'compaction/summary', 'compaction/prune', 'compaction/end',
  'command/run', 'command/done', 'turn/start', 'step/start',
]);
const DEFAULTS = {
  preStepTimeoutMs: 1500,
  preExecuteTimeoutMs: 500,
  turnStoppingTimeoutMs: 6000, // validation (a script check) runs before the answer
  commandTimeoutMs: 5000,
  queueLimit: 5000, // events kept for resending while the child is down
  restartDelayMs: 500, // first restart delay; doubles per consecutive failure
  maxRestartDelayMs: 30000,
  maxTimeouts: 3, // consecutive unanswered requests before the child is replaced
};

function str(value) {
  return typeof value === 'string' ? value : null;
}

function sessionOf(agent) {
  try {
    return str(agent?.session?.id);
  } catch {
    return null;
  }
}

function plain(value) {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value));
  } catch {
    return null;
  }
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts = [];
  for (const block of content) {
    if (typeof block === 'string') parts.push(block);
    else if (block && block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
  }
  return parts.join('\n');
}

// The text the person typed in this step (null when the step has none).
function userInput(messages) {
  const texts = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    try {
      if (!m || m.role !== 'user') continue;
      const kind = m.source?.kind ?? null;
      if (kind !== null && !USER_KINDS.has(kind)) continue;
      const text = textOf(m.content);
      if (text.trim() && !text.trimStart().startsWith(BLOCK_MARKER)) texts.push(text);
    } catch {
      // an unreadable message is not user input
    }
  }
  return texts.length ? texts.join('\n') : null;
}

// Index in `entered` of the last message the step claimed from its inbox (-1: none).
// Downstream listeners may copy a message, so its id counts as well as its identity.
function lastClaimed(entered, claimed) {
  const list = Array.isArray(claimed) ? claimed : [];
  const ids = new Set();
  for (const m of list) {
    try {
      if (m && m.id !== undefined) ids.add(m.id);
    } catch {
      // an unreadable message is matched by identity only
    }
  }
  return entered.findLastIndex((m) => {
    if (list.includes(m)) return true;
    try {
      return m && m.id !== undefined && ids.has(m.id);
    } catch {
      return false;
    }
  });
}

function isOurs(message) {
  try {
    return message?.source?.kind === SOURCE_KIND;
  } catch {
    return false;
  }
}

// {type, seq, time, data?}: only what the Python side reads, as plain JSON.
function slimEvent(event) {
  const type = str(event?.type);
  if (type === null || typeof event.seq !== 'number') return null;
  const out = { type, seq: event.seq, time: event.time ?? null };
  if (!DATA_TYPES.has(type)) return out;
  const data = event.data && typeof event.data === 'object' ? { ...event.data } : {};
  delete data.stream; // assistant/message: the raw chunk stream, large and redundant
  delete data.rawOutput; // compaction/summary: duplicates summary
  if (data.message && typeof data.message === 'object') {
    const message = { ...data.message };
    if (message.source && typeof message.source === 'object') {
      const { replayState, ...source } = message.source;
      message.source = source;
    }
    data.message = message;
  }
  const copy = plain(data);
  if (copy === null) out.data_error = true; // the server re-reads the log for it
  else out.data = copy;
  return out;
}

class Bridge {
  constructor(cfg, log) {
    this.cfg = cfg;
    this.log = log;
    this.child = null;
    this.nextId = 1;
    this.waiting = new Map(); // id -> {resolve, timer}
    this.unacked = new Map(); // id -> {line, count}: durable requests not yet acknowledged
    this.unackedCount = 0;
    this.outbox = []; // events not yet sent
    this.flushQueued = false;
    this.failures = 0;
    this.retryAt = 0;
    this.timeouts = 0;
    this.preExecute = true; // until hello says no preconditions are configured
    this.closed = false;
  }

  ensure() {
    if (this.child) return true;
    if (this.closed || !this.cfg.command || Date.now() < this.retryAt) return false;
    const [file, ...args] = this.cfg.command;
    const env = { ...process.env };
    if (this.cfg.home) env.CONVMEM_HOME = this.cfg.home;
    let child;
    try {
      child = spawn(file, args, { stdio: ['pipe', 'pipe', 'ignore'], env, windowsHide: true });
    } catch (error) {
      this.onExit(null, `spawn failed: ${error}`);
      return false;
    }
    this.child = child;
    let buffer = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      let at;
      while ((at = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line.trim()) this.onLine(line);
      }
    });
    const swallow = () => {}; // EPIPE and friends: the 'exit' handler does the cleanup
    child.stdin.on('error', swallow);
    child.stdout.on('error', swallow);
    child.on('error', (error) => this.onExit(child, String(error)));
    child.on('exit', (code, signal) => this.onExit(child, `exited (${code ?? signal})`));
    // Open pipes would keep `dsh headless` alive after its turn.
    child.unref();
    child.stdin.unref?.();
    child.stdout.unref?.();
    this.timeouts = 0;
    this.write({ id: this.nextId++, op: 'hello', host: 'dsh' });
    for (const { line } of this.unacked.values()) this.writeLine(line);
    return true;
  }

  onExit(child, why) {
    if (child !== null && child !== this.child) return;
    this.child = null;
    for (const [id, { resolve, timer }] of this.waiting) {
      clearTimeout(timer);
      resolve(null);
      this.waiting.delete(id);
    }
    if (this.closed) return;
    this.failures += 1;
    const delay = Math.min(this.cfg.maxRestartDelayMs, this.cfg.restartDelayMs * 2 ** (this.failures - 1));
    this.retryAt = Date.now() + delay;
    this.log(`convmem child ${why}; running without memory, restart in >= ${delay} ms`);
  }

  onLine(line) {
    let reply;
    try {
      reply = JSON.parse(line);
    } catch {
      return;
    }
    this.failures = 0;
    this.timeouts = 0;
    if (typeof reply?.pre_execute === 'boolean') this.preExecute = reply.pre_execute; // hello
    const durable = this.unacked.get(reply?.id);
    if (durable) {
      this.unacked.delete(reply.id);
      this.unackedCount -= durable.count;
    }
    const waiter = this.waiting.get(reply?.id);
    if (waiter) {
      this.waiting.delete(reply.id);
      clearTimeout(waiter.timer);
      waiter.resolve(reply);
    }
    if (reply && reply.ok === false) this.log(`convmem: ${reply.error}`);
  }

  write(message) {
    this.writeLine(JSON.stringify(message));
  }

  writeLine(line) {
    try {
      this.child?.stdin.write(line + '\n');
    } catch {
      // the child is going away; 'exit' follows
    }
  }

  // A request that must not be lost: kept until acknowledged, resent after a restart.
  post(message, count = 1) {
    const id = this.nextId++;
    const line = JSON.stringify({ id, ...message });
    this.unacked.set(id, { line, count });
    this.unackedCount += count;
    while (this.unackedCount > this.cfg.queueLimit && this.unacked.size > 1) {
      const [oldest, entry] = this.unacked.entries().next().value;
      this.unacked.delete(oldest);
      this.unackedCount -= entry.count; // the session log still has these events
    }
    if (this.child) this.writeLine(line);
    else this.ensure(); // a successful start resends every unacknowledged line
  }

  event(sessionId, event) {
    const slim = slimEvent(event);
    if (!sessionId || !slim) return;
    this.outbox.push({ session_id: sessionId, event: slim });
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(() => this.flush());
    }
  }

  flush() {
    this.flushQueued = false;
    if (!this.outbox.length) return;
    const events = this.outbox;
    this.outbox = [];
    this.post({ op: 'events', events }, events.length);
  }

  // Resolves to the reply, or null when the child is unavailable or too slow.
  request(op, fields, timeoutMs) {
    this.flush();
    if (!this.ensure()) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise((resolve) => {
      // A referenced timer: it keeps dsh alive while we wait, never longer than the deadline.
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        this.timeouts += 1;
        this.log(`convmem: no answer to ${op} within ${timeoutMs} ms; going on without it`);
        if (this.timeouts >= this.cfg.maxTimeouts && this.child) {
          this.log('convmem child is not answering; replacing it');
          try {
            this.child.kill('SIGKILL');
          } catch {
            // already gone
          }
        }
        resolve(null);
      }, timeoutMs);
      this.waiting.set(id, { resolve, timer });
      this.write({ id, op, ...fields });
    });
  }

  close() {
    this.flush();
    this.closed = true;
    // Ending stdin lets the child finish the queued lines, then exit on end of input.
    try {
      this.child?.stdin.end();
    } catch {
      // already closed
    }
  }
}

export function apply(ctx, config) {
  const cfg = { ...DEFAULTS, ...(config || {}) };
  const command = Array.isArray(cfg.command) && cfg.command.length && cfg.command.every((p) => typeof p === 'string');
  cfg.command = command ? cfg.command : null;
  const logFile = str(cfg.log) ?? (str(cfg.home) ? join(cfg.home, 'dsh-plugin.log') : null);
  const log = (text) => {
    if (!logFile) return;
    try {
      mkdirSync(dirname(logFile), { recursive: true });
      appendFileSync(logFile, `${new Date().toISOString()} ${text}\n`); // rare: errors only
    } catch {
      // logging must never break the host
    }
  };
  if (!command) log('convmem: config.command is missing; run `convmem install dsh` again');
  const bridge = new Bridge(cfg, log);
  const injectedTurns = new Map(); // `${session}#${turn}` -> true; once per turn
  const compacted = new Set(); // sessions compacted since our last injection
  bridge.ensure(); // warm up now, so the first step does not pay for Python's start

  if (typeof ctx.effect === 'function') ctx.effect(() => () => bridge.close());
  ctx.on('dispose', () => bridge.close());

  ctx.on('agent/created', (payload) => {
    const sessionId = sessionOf(payload?.agent);
    if (!sessionId) return;
    const source = str(payload?.source) ?? 'startup';
    bridge.flush();
    let cwd = null;
    try {
      cwd = str(payload.agent.session.header.cwd); // the session's own working directory
    } catch {
      cwd = null;
    }
    bridge.post({ op: 'session_start', session_id: sessionId, source, cwd: cwd ?? process.cwd() });
  });

  ctx.on('session/event', (session, event) => {
    try {
      const sessionId = str(session?.id);
      bridge.event(sessionId, event);
      if (sessionId && event?.type === 'compaction/summary') compacted.add(sessionId);
    } catch (error) {
      log(`convmem: cannot forward an event: ${error}`);
    }
  });

  ctx.on('agent/pre-step', async (payload, next) => {
    const down = await next();
    try {
      if (!down || down.kind !== 'enter' || !Array.isArray(down.messages)) return down;
      const sessionId = sessionOf(payload?.agent);
      if (!sessionId || down.messages.some(isOurs)) return down;
      const turn = typeof payload.turn === 'number' ? payload.turn : null;
      const query = userInput(payload.messages) ?? userInput(down.messages);
      const key = `${sessionId}#${turn}`;
      // Inject on a step that carries the person's input, once per turn (insertions
      // are durable history and would pile up), and again after a compaction folded
      // the earlier block into the summary.
      const afterCompaction = compacted.has(sessionId);
      if (!afterCompaction && (query === null || injectedTurns.has(key))) return down;
      injectedTurns.set(key, true);
      if (injectedTurns.size > 1000) injectedTurns.delete(injectedTurns.keys().next().value);
      compacted.delete(sessionId);
      const reply = await bridge.request(
        'pre_step',
        {
          session_id: sessionId,
          turn,
          step: typeof payload.step === 'number' ? payload.step : null,
          query,
          trigger: afterCompaction && query === null ? 'compaction' : 'pre-step',
        },
        cfg.preStepTimeoutMs,
      );
      if (!reply || reply.ok !== true || typeof reply.text !== 'string' || !reply.text) return down;
      const message = {
        id: `convmem-${randomUUID()}`,
        role: 'user',
        content: [{ type: 'text', text: reply.text }],
        source: { kind: SOURCE_KIND },
      };
      // Right after the step's claimed user messages (the person's input), before what
      // other plugins add after them (DSH's runtime context); first when none was claimed.
      return { ...down, messages: down.messages.toSpliced(lastClaimed(down.messages, payload.messages) + 1, 0, message) };
    } catch (error) {
      log(`convmem: pre-step failed open: ${error}`);
      return down;
    }
  });

  // A reply that broke a blocking validation check: DSH 0.2.1 has no post-step decision,
  // but input in the agent's next-step inbox when the turn is stopping makes it run one
  // more step of the same turn. convmem answers each failed reply once, and only while
  // validation.max_repair_attempts remain.
  ctx.on('agent/turn-stopping', async (payload) => {
    try {
      const agent = payload?.agent;
      const sessionId = sessionOf(agent);
      if (!sessionId) return;
      const turn = typeof payload.turn === 'number' ? payload.turn : null;
      const reply = await bridge.request('turn_stopping', { session_id: sessionId, turn }, cfg.turnStoppingTimeoutMs);
      if (!reply || reply.ok !== true || typeof reply.repair !== 'string' || !reply.repair) return;
      agent.inbox.append('next-step', {
        id: `convmem-${randomUUID()}`,
        role: 'user',
        content: [{ type: 'text', text: reply.repair }],
        source: { kind: SOURCE_KIND },
      });
    } catch (error) {
      log(`convmem: turn-stopping failed open: ${error}`);
    }
  });

  ctx.on('tools/pre-execute', async (exec, next) => {
    let reply = null;
    try {
      if (bridge.preExecute) {
        const sessionId = sessionOf(exec?.agent);
        const tool = str(exec?.name);
        if (sessionId && tool) {
          const args = plain(exec.arguments);
          reply = await bridge.request(
            'pre_execute',
            { session_id: sessionId, tool, arguments: args },
            cfg.preExecuteTimeoutMs,
          );
        }
      }
    } catch (error) {
      log(`convmem: pre-execute failed open: ${error}`);
    }
    if (reply && reply.ok === true && reply.allowed === false) {
      return { kind: 'deny', reason: str(reply.reason) ?? 'refused by a convmem precondition' };
    }
    return next();
  });

  // `/memory ...` runs where DSH executes commands (TUI and web clients); headless runs
  // and the SDK cannot invoke it (see the top of this file).
  let commands = null;
  try {
    commands = ctx.commands ?? null;
  } catch {
    commands = null;
  }
  if (commands && typeof commands.register === 'function') {
    try {
      commands.register({
        name: 'memory',
        description: 'convmem memory: status | explain | inspect <id> | search <words>',
        input: { hint: 'status | explain | inspect <id> | search <words>' },
        handler: async (inv) => {
          const reply = await bridge.request(
            'command',
            { session_id: sessionOf(inv?.agent), args: str(inv?.rawInput) ?? '' },
            cfg.commandTimeoutMs,
          );
          if (!reply) return { kind: 'error', text: 'convmem is not answering; see dsh-plugin.log in its data folder' };
          if (reply.ok !== true) return { kind: 'error', text: String(reply.error) };
          return { kind: reply.kind === 'error' ? 'error' : 'success', text: String(reply.text ?? '') };
        },
      });
    } catch (error) {
      log(`convmem: cannot register /memory: ${error}`);
    }
  }
}

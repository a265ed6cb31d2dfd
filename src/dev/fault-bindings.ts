/**
 * Fault injection by wrapping bindings: the code under test runs as deployed, and only what it talks to (the task
 * queues, D1, the workflow objects as an agent sees them, the agent hosts as an object sees them) misbehaves as
 * the fault settings say (faults.ts). A deployment without DEV_HOOKS gets its bindings unchanged.
 */
import { devHooksEnabled, faultFires, InjectedFault } from "./faults";

type Method = (...args: unknown[]) => unknown;
/** The object whose bindings these are, when it is an object: a fault may crash it (`abortAfterChildStart`). */
type Owner = Pick<DurableObjectState, "abort">;
type Wrapper = (env: Env, target: object, owner: Owner | undefined, name?: string) => object;

/** One wrapper per binding and env (and owner), so a test that spies on a binding spies on the one the code calls. */
const wrapped = new WeakMap<object, Map<PropertyKey, object>>();

/** The bindings as the fault settings break them; `env` itself when faults are off. */
export function withInjectedFaults(env: Env, owner?: Owner): Env {
  if (!devHooksEnabled(env)) return env;
  return new Proxy(env, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      const wrap = typeof key === "string" && value !== null && typeof value === "object" ? wrapperOf(key) : undefined;
      if (!wrap) return value;
      const cache = wrapped.get(owner ?? target) ?? new Map<PropertyKey, object>();
      wrapped.set(owner ?? target, cache);
      if (!cache.has(key)) cache.set(key, wrap(env, value as object, owner));
      return cache.get(key);
    },
  });
}

/**
 * The alarm's tick with the `alarmThrows` fault: it throws before it does anything, as a tick that crashed would,
 * inside the alarm's own guard (which sets the alarm again).
 */
export function withTickFaults<A extends [{ state(): { tenant: string } | undefined }, Env, ...unknown[]], R>(tick: (...args: A) => Promise<R>) {
  return async (...args: A): Promise<R> => {
    const [transitions, env] = args;
    if (devHooksEnabled(env) && faultFires(env, "alarmThrows", transitions.state()?.tenant)) throw new InjectedFault("alarmThrows");
    return tick(...args);
  };
}

/**
 * A workflow object's outbox with the `abortAfterPersist` fault: the object is reset as it is about to deliver what a
 * commit wrote, so state, outbox and alarm are durable and the sends are not made (the alarm makes them later).
 */
export function withDeliveryFaults<O extends { deliver(workflow: { tenant: string }): Promise<unknown> }>(outbox: O, env: Env, owner: Owner): O {
  if (!devHooksEnabled(env)) return outbox;
  return overriding(outbox, DELIVERY_FAULTS, { env, owner }) as O;
}

const DELIVERY_FAULTS: Replacements<{ env: Env; owner: Owner }> = {
  deliver: (original, { env, owner }) => (workflow) => {
    if (faultFires(env, "abortAfterPersist", (workflow as { tenant: string }).tenant)) owner.abort("injected fault: abortAfterPersist");
    return original(workflow);
  },
};

/**
 * A bulk job's calls with the `abortAfterBulkAction` fault: the job's object is reset as a workflow's answer comes
 * back, so the action landed and the job's record of it did not (the worst moment for "never act twice").
 */
export function withBulkFaults<C extends { act(workflowId: string): Promise<unknown> }>(caller: C, env: Env, owner: Owner, tenant: string): C {
  if (!devHooksEnabled(env)) return caller;
  return {
    ...caller,
    async act(workflowId: string) {
      const outcome = await caller.act(workflowId);
      if (faultFires(env, "abortAfterBulkAction", tenant)) owner.abort("injected fault: abortAfterBulkAction");
      return outcome;
    },
  };
}

/**
 * The task queue's consumer with the `consumerThrows` fault: a message it picks crashes the consumer, which
 * answers the rest of the batch and then throws, so the platform sends back just what was never answered.
 */
export function withConsumerFaults(consume: (batch: MessageBatch<unknown>, env: Env) => Promise<void>) {
  return async (batch: MessageBatch<unknown>, env: Env): Promise<void> => {
    if (!devHooksEnabled(env)) return consume(batch, env);
    const crashed = new Set(batch.messages.filter((message) => faultFires(env, "consumerThrows", tenantOf(message.body))));
    if (crashed.size === 0) return consume(batch, env);
    const answered = batch.messages.filter((message) => !crashed.has(message));
    await consume(new Proxy(batch, { get: (target, key) => (key === "messages" ? answered : Reflect.get(target, key)) }), env);
    throw new InjectedFault("consumerThrows");
  };
}

function tenantOf(body: unknown): string | undefined {
  const tenant = (body as { tenant?: unknown } | null)?.tenant;
  return typeof tenant === "string" ? tenant : undefined;
}

function wrapperOf(key: string): Wrapper | undefined {
  if (key === "TASKS" || /^TASKS_\d+$/.test(key)) return faultyTaskQueue;
  if (key === "DB" || /^DB_\d+$/.test(key)) return faultyIndexDb;
  if (key === "WORKFLOW_SCHEDULER") return faultyNamespace(faultyObjectForAgent);
  if (key === "AGENT_HOST") return faultyNamespace(faultyHostForObject);
  return undefined;
}

/** `enqueueFails`: the task queue refuses a send. */
function faultyTaskQueue(env: Env, queue: object): object {
  return overriding(queue, TASK_QUEUE_FAULTS, { env });
}

const TASK_QUEUE_FAULTS: Replacements<{ env: Env }> = {
  sendBatch: (original, { env }) => (messages) =>
    faultFires(env, "enqueueFails", tenantOf((messages as { body?: unknown }[])[0]?.body)) ? Promise.reject(new InjectedFault("enqueueFails")) : original(messages),
};

/**
 * `indexWriteFails`: D1 refuses the write of an index entry (the one statement that inserts into `workflows`), run
 * alone or in a batch (the index write's, with its minute of the series).
 */
function faultyIndexDb(env: Env, db: object): object {
  return overriding(db, INDEX_DB_FAULTS, { env });
}

/** The index writes bound through a wrapped database, with their tenant, so a batch that holds one is known. */
const indexWrites = new WeakMap<object, string | undefined>();

const INDEX_DB_FAULTS: Replacements<{ env: Env }> = {
  prepare: (original, { env }) => (sql) => {
    const statement = original(sql) as D1PreparedStatement;
    if (typeof sql !== "string" || !/^\s*INSERT INTO workflows\b/.test(sql)) return statement;
    return overriding(statement, INDEX_WRITE_FAULTS, { env });
  },
  batch: (batch, { env }) => (statements) => {
    const write = (statements as object[]).find((statement) => indexWrites.has(statement));
    if (write && faultFires(env, "indexWriteFails", indexWrites.get(write))) return Promise.reject(new InjectedFault("indexWriteFails"));
    return batch(statements);
  },
};

const INDEX_WRITE_FAULTS: Replacements<{ env: Env }> = {
  bind: (bind, { env }) => (...values) => {
    const bound = bind(...values) as object;
    const tenant = typeof values[0] === "string" ? values[0] : undefined;
    const faulty = overriding(bound, INDEX_RUN_FAULTS, { env, tenant });
    indexWrites.set(faulty, tenant);
    return faulty;
  },
};

const INDEX_RUN_FAULTS: Replacements<{ env: Env; tenant: string | undefined }> = {
  run: (run, { env, tenant }) => () => (faultFires(env, "indexWriteFails", tenant) ? Promise.reject(new InjectedFault("indexWriteFails")) : run()),
};

/**
 * A workflow object as an agent (or a parent starting its child) reaches it: the object's name is
 * `<tenant>:<workflowId>`, the tenant decides (FAULT_FREE_TENANTS).
 */
interface ObjectContext {
  env: Env;
  tenant: string;
  name: string;
  owner: Owner | undefined;
}

function faultyObjectForAgent(env: Env, stub: object, owner: Owner | undefined, name = ""): object {
  return overriding(stub, OBJECT_FAULTS_FOR_AGENT, { env, tenant: name.slice(0, name.indexOf(":")), name, owner });
}

/**
 * `agentDiesAfterClaim`: the object records the claim, and the agent hears nothing back, so it does nothing: no
 * request, no heartbeat, no report (only the supervisor can notice); the attempts a report hands back for eager
 * dispatch die the same way. `dropHeartbeats`: an attempt's heartbeats never arrive (decided once per attempt).
 */
const OBJECT_FAULTS_FOR_AGENT: Replacements<ObjectContext> = {
  /** `abortAfterChildStart`: the parent that started this child dies before it records the start. */
  start: (original, { env, tenant, owner }) => async (request) => {
    const outcome = await original(request);
    const isChild = (request as { parent?: unknown } | null)?.parent !== undefined;
    if (owner && isChild && faultFires(env, "abortAfterChildStart", tenant)) owner.abort("injected fault: abortAfterChildStart");
    return outcome;
  },
  claim: (original, { env, tenant, name }) => async (stepId, attempt) => {
    const reply = (await original(stepId, attempt)) as { ok: boolean };
    if (!reply.ok) return reply;
    if (faultFires(env, "agentDiesAfterClaim", tenant)) return { ok: false, code: "injected_agent_death", message: "injected fault: agentDiesAfterClaim" };
    decideHeartbeats(env, tenant, `${name}/${String(stepId)}#${String(attempt)}`);
    return reply;
  },
  heartbeat: (original, { name }) => (stepId, attempt, ...rest) => (silent.get(`${name}/${String(stepId)}#${String(attempt)}`) ? Promise.resolve({ ok: true }) : original(stepId, attempt, ...rest)),
  report: (original, { env, tenant, name }) => async (...args) => {
    const reply = (await original(...args)) as { followUps?: { task: { stepId: string; attempt: number } }[] };
    if (!reply || !Array.isArray(reply.followUps)) return reply;
    const living = reply.followUps.filter(() => !faultFires(env, "agentDiesAfterClaim", tenant));
    for (const { task } of living) decideHeartbeats(env, tenant, `${name}/${task.stepId}#${task.attempt}`);
    return { ...reply, followUps: living };
  },
};

/** An agent host as a start's hand-off reaches it. `agentDiesAfterClaim`: the attempt claimed for it never runs. */
function faultyHostForObject(env: Env, stub: object): object {
  return overriding(stub, HOST_FAULTS_FOR_OBJECT, { env });
}

const HOST_FAULTS_FOR_OBJECT: Replacements<{ env: Env }> = {
  run: (original, { env }) => (message, ...rest) => {
    const { tenant, workflowId, stepId, attempt } = message as { tenant: string; workflowId: string; stepId: string; attempt: number };
    if (faultFires(env, "agentDiesAfterClaim", tenant)) return Promise.resolve();
    decideHeartbeats(env, tenant, `${tenant}:${workflowId}/${stepId}#${attempt}`);
    return original(message, ...rest);
  },
};

/** A Durable Object namespace whose stubs are wrapped. */
function faultyNamespace(wrapStub: Wrapper): Wrapper {
  return (env, namespace, owner) => overriding(namespace, { getByName: (original) => (name, ...rest) => wrapStub(env, original(name, ...rest) as object, owner, String(name)) }, {});
}

/** Attempts whose heartbeats are dropped, decided once as their agent starts them (by `<object name>/<step>#<n>`). */
const silent = new Map<string, boolean>();

function decideHeartbeats(env: Env, tenant: string, attempt: string): void {
  if (faultFires(env, "dropHeartbeats", tenant)) silent.set(attempt, true);
}

/**
 * The replaced methods of a wrapped binding, given the original (bound to the binding) and what the wrapper knows.
 * Declared once, not per wrapped stub: every call through a workflow object or agent host gets a stub of its own.
 */
type Replacements<C> = Record<string, (original: Method, context: C) => Method>;

/**
 * `target` with some methods replaced; every other property read from it as it is. Methods are called on the
 * target itself (Reflect.apply): native bindings refuse another `this`, and an RPC stub would take `bind` for a
 * remote method. A method read again is the same wrapper while the target's own is unchanged (a spy set later is
 * taken), so a long-lived binding (a namespace, a queue) costs no new functions per call.
 */
function overriding<C>(target: object, methods: Replacements<C>, context: C): object {
  const calls = new Map<PropertyKey, { value: Method; call: Method }>();
  return new Proxy(target, {
    get(object, key) {
      const value: unknown = Reflect.get(object, key);
      if (typeof value !== "function") return value;
      const known = calls.get(key);
      if (known?.value === value) return known.call;
      const replace = typeof key === "string" ? methods[key] : undefined;
      const bound = callOn(object, value as Method);
      const call = replace ? replace(bound, context) : bound;
      calls.set(key, { value: value as Method, call });
      return call;
    },
  });
}

/** `method` called on `target`; a function with no name of its own, so creating it costs no naming. */
function callOn(target: object, method: Method): Method {
  return (...args) => Reflect.apply(method, target, args);
}

/**
 * infra/ must agree with the code: every YAML parses, Kubernetes objects are
 * well formed and point at images, commands, ports and probe paths the apps
 * really have, every environment variable is one the apps read, and every
 * metric in the dashboard and the alerts is one the apps register.
 * (No cluster, Docker or promtool here: these are static checks.)
 */
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  APPS,
  PORT_VARIABLE,
  componentOfCommand,
  envNamesByComponent,
  isRegistered,
  listFiles,
  loadYaml,
  metricNamesIn,
  read,
  registeredMetrics,
  servedPaths,
  startCommandOf,
  type Component,
  type RegisteredMetrics,
} from "../helpers/infra-facts.js";
import { SHUTDOWN_DEADLINE_MS, workerShutdownDeadlineMs } from "@tasklane/config/shutdown-deadlines";
import { configData, deployment, hpa, job, k8sObject, scaledObject, selectorSpec, service, type Container, type Deployment } from "../helpers/k8s-schemas.js";

/** The apiVersion each kind we ship must use (an old group version would be refused by current clusters). */
const API_VERSIONS: Record<string, string> = {
  Namespace: "v1",
  ConfigMap: "v1",
  Secret: "v1",
  Service: "v1",
  Deployment: "apps/v1",
  Job: "batch/v1",
  PodDisruptionBudget: "policy/v1",
  HorizontalPodAutoscaler: "autoscaling/v2",
  ScaledObject: "keda.sh/v1alpha1",
};

const k8sFiles = listFiles("infra/k8s", [".yaml", ".yml"]).filter((f) => !f.endsWith("kustomization.yaml"));
const objects = k8sFiles.flatMap((file) => loadYaml(file).map((doc) => ({ file, doc, meta: k8sObject.parse(doc) })));
const ofKind = <T>(kind: string, schema: z.ZodType<T>) => objects.filter((o) => o.meta.kind === kind).map((o) => schema.parse(o.doc));
const deployments = ofKind("Deployment", deployment);
const matches = (selector: Record<string, string>, target: Record<string, string>) => Object.entries(selector).every(([k, v]) => target[k] === v);

/** Which app a container runs, from its command (which must name a script that exists). */
function componentOf(c: Container): Component {
  const component = componentOfCommand(c.command);
  if (!component) throw new Error(`container ${c.name}: command ${JSON.stringify(c.command)} is neither an app's start script command nor the migration CLI`);
  return component;
}

/** Variables Node itself reads, not the apps: allowed in any container. */
const NODE_RUNTIME_ENV = new Set(["NODE_OPTIONS"]);

/** A Kubernetes memory quantity in MiB (the binary suffixes the manifests use). */
function mebibytes(quantity: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!m) throw new Error(`memory quantity ${quantity}: use Mi or Gi`);
  return Number(m[1]) * (m[2] === "Gi" ? 1024 : 1);
}

/** A node flag's numeric value from a list of flags (`--name=value`), or undefined. */
function flagValue(flags: readonly string[], name: string): number | undefined {
  const values = flags.filter((f) => f.startsWith(`--${name}=`)).map((f) => Number(f.slice(name.length + 3)));
  expect(values.length, `--${name} given at most once`).toBeLessThanOrEqual(1);
  return values[0];
}

const envNames = envNamesByComponent();
const paths = servedPaths();
let metrics: RegisteredMetrics;
beforeAll(async () => {
  metrics = await registeredMetrics();
});

describe("infra YAML", () => {
  it("every YAML file under infra/ parses", () => {
    const files = listFiles("infra", [".yaml", ".yml"]);
    expect(files.length).toBeGreaterThanOrEqual(9);
    for (const file of files) expect(() => loadYaml(file), file).not.toThrow();
  });
});

describe("Kubernetes manifests", () => {
  it("are objects of known kinds with the right apiVersion, a name and the tasklane namespace", () => {
    expect(objects.length).toBeGreaterThan(15);
    for (const { file, meta } of objects) {
      expect(API_VERSIONS[meta.kind], `${file}: unexpected kind ${meta.kind}`).toBe(meta.apiVersion);
      if (meta.kind !== "Namespace") expect(meta.metadata.namespace, `${file}: ${meta.kind}/${meta.metadata.name}`).toBe("tasklane");
    }
    const names = objects.map((o) => `${o.meta.kind}/${o.meta.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
  });

  it("kustomization.yaml lists every manifest", () => {
    const [kustomization] = loadYaml("infra/k8s/kustomization.yaml");
    const parsed = z.object({ apiVersion: z.string(), kind: z.literal("Kustomization"), resources: z.array(z.string()) }).passthrough().parse(kustomization);
    expect([...parsed.resources].sort()).toEqual(k8sFiles.map((f) => f.replace("infra/k8s/", "")).sort());
  });

  it("runs every app as a Deployment whose selector matches its pods and whose containers have resources", () => {
    const components = deployments.map((d) => componentOf(d.spec.template.spec.containers[0] as Container));
    expect(components.sort()).toEqual([...APPS].sort());
    for (const d of deployments) expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels), d.metadata.name).toBe(true);
  });

  it("probes hit paths each app serves, on the port it listens on", () => {
    for (const d of deployments) {
      for (const c of d.spec.template.spec.containers) {
        const component = componentOf(c);
        const portVariable = PORT_VARIABLE[component] as string;
        const listening = c.env.find((e) => e.name === portVariable)?.value;
        expect(listening, `${c.name} sets ${portVariable}`).toBeDefined();
        expect(c.livenessProbe, `${c.name} liveness`).toBeDefined();
        expect(c.readinessProbe, `${c.name} readiness`).toBeDefined();
        for (const p of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
          if (!p) continue;
          expect(paths.get(component)?.has(p.httpGet.path), `${c.name} serves ${p.httpGet.path}`).toBe(true);
          const port = c.ports.find((cp) => cp.name === p.httpGet.port || cp.containerPort === p.httpGet.port);
          expect(String(port?.containerPort), `${c.name} probe port`).toBe(listening);
        }
        // Liveness must not depend on Postgres or Redis: restarting cannot bring them back.
        if (component !== "console") expect(c.livenessProbe?.httpGet.path).toBe("/livez");
        if (component !== "console") expect(c.readinessProbe?.httpGet.path).toBe("/readyz");
        const scrape = d.spec.template.metadata;
        if (component !== "console") expect(JSON.stringify(scrape)).toContain(`"prometheus.io/port":"${listening}"`);
      }
    }
  });

  it("uses only environment variables the apps read, from a ConfigMap and Secret that exist", () => {
    const union = new Set([...envNames.values()].flatMap((s) => [...s]));
    const configMaps = ofKind("ConfigMap", configData);
    const secrets = ofKind("Secret", configData);
    for (const cm of [...configMaps, ...secrets]) {
      for (const key of Object.keys({ ...cm.data, ...cm.stringData })) expect(union.has(key), `${cm.kind}/${cm.metadata.name}: ${key}`).toBe(true);
    }
    const secretKeys = new Map(secrets.map((s) => [s.metadata.name, new Set(Object.keys({ ...s.data, ...s.stringData }))]));
    const pods = [...deployments, ...ofKind("Job", job)].map((w) => w.spec.template.spec);
    for (const c of pods.flatMap((p) => p.containers)) {
      const readable = envNames.get(componentOf(c)) ?? new Set<string>();
      for (const e of c.env) {
        expect(readable.has(e.name) || NODE_RUNTIME_ENV.has(e.name), `${c.name} reads ${e.name}`).toBe(true);
        const ref = e.valueFrom?.secretKeyRef;
        if (ref) expect(secretKeys.get(ref.name)?.has(ref.key), `${c.name}: secret ${ref.name}/${ref.key}`).toBe(true);
      }
      for (const from of c.envFrom) {
        if (from.configMapRef) expect(configMaps.some((m) => m.metadata.name === from.configMapRef?.name)).toBe(true);
        if (from.secretRef) expect(secrets.some((s) => s.metadata.name === from.secretRef?.name)).toBe(true);
      }
    }
  });

  it("sizes every container's heap from its memory limit: old space a quarter of it, young space and a native reserve within the rest", () => {
    // The memory bounds (docs/architecture.md) were measured with the old space Node gives a 1 GiB container,
    // --max-old-space-size=256 (a quarter, V8's own ratio). Set explicitly, so a Node that cannot see the
    // cgroup's limit does not size its heap from the host's memory and get OOM-killed before it collects.
    const containers = [...deployments, ...ofKind("Job", job)].flatMap((w) => w.spec.template.spec.containers);
    expect(containers.length).toBe(APPS.length + 1);
    for (const c of containers) {
      const limit = mebibytes(c.resources.limits.memory);
      const options = c.env.find((e) => e.name === "NODE_OPTIONS")?.value ?? "";
      const oldSpace = flagValue(options.split(/\s+/), "max-old-space-size");
      expect(oldSpace, `${c.name}: NODE_OPTIONS sets --max-old-space-size`).toBe(limit / 4);
      // V8's young generation is three semi-spaces (default 16 MiB each); ~128 MiB for code, stacks and buffers.
      const semiSpace = flagValue(c.command.slice(1, -1), "max-semi-space-size") ?? 16;
      expect((oldSpace as number) + 3 * semiSpace + 128, `${c.name}: heap within ${limit} MiB`).toBeLessThanOrEqual(limit);
    }
    const gateway = containers.find((c) => c.name === "gateway");
    expect(gateway?.env.find((e) => e.name === "NODE_OPTIONS")?.value).toBe("--max-old-space-size=256");
  });

  it("gives each app's pods a termination grace past its preStop pause plus the app's own shutdown deadline, the worker's for the drain grace it is given", () => {
    const setIn = (name: string) => ofKind("ConfigMap", configData).map((m) => m.data?.[name]).find((v) => v !== undefined);
    const drainGrace = setIn("WORKER_DRAIN_GRACE_SECONDS");
    const deadlines: Record<string, number> = { ...SHUTDOWN_DEADLINE_MS, worker: workerShutdownDeadlineMs(drainGrace === undefined ? undefined : Number(drainGrace) * 1000) };
    for (const d of deployments) {
      const app = componentOf(d.spec.template.spec.containers[0] as Container);
      const grace = (d.spec.template.spec as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ?? 30;
      // A preStop hook runs inside the grace, before SIGTERM reaches the app: its pause comes off the app's time.
      const preStop = (d.spec.template.spec.containers[0] as { lifecycle?: { preStop?: { exec?: { command?: string[] } } } }).lifecycle?.preStop?.exec?.command ?? [];
      const pauseMs = preStop[0] === "sleep" ? Number(preStop[1]) * 1000 : 0;
      expect(Number.isFinite(pauseMs), `${app}: preStop ${JSON.stringify(preStop)}`).toBe(true);
      if (deadlines[app] !== undefined) expect(grace * 1000, `${app}: terminationGracePeriodSeconds`).toBeGreaterThan(pauseMs + deadlines[app]);
    }
  });

  it("Services and PodDisruptionBudgets select pods of a Deployment, on ports the pods expose", () => {
    const podsOf = (selector: Record<string, string>) => deployments.filter((d) => matches(selector, d.spec.template.metadata.labels));
    for (const svc of ofKind("Service", service)) {
      const [target] = podsOf(svc.spec.selector);
      expect(target, `Service/${svc.metadata.name}`).toBeDefined();
      const exposed = (target as Deployment).spec.template.spec.containers.flatMap((c) => c.ports);
      for (const p of svc.spec.ports) expect(exposed.some((e) => e.name === p.targetPort || e.containerPort === p.targetPort), `${svc.metadata.name}:${p.targetPort}`).toBe(true);
    }
    const pdbs = ofKind("PodDisruptionBudget", selectorSpec);
    for (const pdb of pdbs) expect(podsOf(pdb.spec.selector.matchLabels)).toHaveLength(1);
    // Every pod goes unready while Postgres or Redis is away; with the default policy (IfHealthyBudget) a
    // budget with no ready pods refuses every eviction, so a node drain would hang for the whole outage.
    for (const pdb of pdbs) expect((pdb.spec as { unhealthyPodEvictionPolicy?: string }).unhealthyPodEvictionPolicy, pdb.metadata.name).toBe("AlwaysAllow");
    expect(pdbs).toHaveLength(deployments.length);
  });

  it("autoscales the gateway on CPU and the worker on PUSH queue depth through KEDA", () => {
    const hpas = ofKind("HorizontalPodAutoscaler", hpa);
    expect(hpas.map((h) => h.spec.scaleTargetRef.name)).toEqual(["gateway"]);
    expect(JSON.stringify(hpas[0]?.spec.metrics)).toContain('"name":"cpu"');
    const [keda] = ofKind("ScaledObject", scaledObject);
    expect(keda?.spec.scaleTargetRef.name).toBe("worker");
    const trigger = keda?.spec.triggers[0];
    expect(trigger?.type).toBe("prometheus");
    const query = trigger?.metadata.query ?? "";
    expect(metricNamesIn(query)).toEqual(["tasklane_queue_depth"]);
    expect(query).toContain('mode="PUSH"');
    expect(Number(trigger?.metadata.threshold)).toBeGreaterThan(0);
    // An apply must not fight the autoscalers over the replica count.
    for (const name of ["gateway", "worker"]) expect(deployments.find((d) => d.metadata.name === name)?.spec).not.toHaveProperty("replicas");
  });

  it("has a migration Job that runs the migrate CLI", () => {
    const jobs = ofKind("Job", job);
    expect(jobs.map((j) => componentOf(j.spec.template.spec.containers[0] as Container))).toEqual(["migrate"]);
  });
});

describe("docker-compose.yml and Dockerfile", () => {
  const compose = z
    .object({ services: z.record(z.string(), z.looseObject({ image: z.string().optional(), command: z.array(z.string()).optional(), environment: z.record(z.string(), z.string()).optional() })) })
    .passthrough()
    .parse(loadYaml("infra/docker-compose.yml")[0]);
  const own = Object.entries(compose.services).filter(([, s]) => s.image === "tasklane:local");

  it("runs postgres:15, redis:7, a one-shot migrate and every app from the one image", () => {
    expect(compose.services.postgres?.image).toBe("postgres:15");
    expect(compose.services.redis?.image).toBe("redis:7");
    expect(own.map(([, s]) => componentOfCommand(s.command ?? [])).sort()).toEqual([...APPS, "migrate"].sort());
    expect(JSON.stringify(compose.services.gateway?.depends_on)).toContain("service_completed_successfully");
  });

  it("sets only variables the apps read, and health checks paths they serve on their ports", () => {
    for (const [name, s] of own) {
      const component = componentOfCommand(s.command ?? []) as Component;
      for (const key of Object.keys(s.environment ?? {})) expect(envNames.get(component)?.has(key), `${name}: ${key}`).toBe(true);
      const check = JSON.stringify(s.healthcheck ?? "");
      const url = /http:\/\/127\.0\.0\.1:(\d+)(\/[a-z/]*)/.exec(check);
      if (component === "migrate") continue;
      expect(url, `${name} health check`).not.toBeNull();
      expect(url?.[1]).toBe(s.environment?.[PORT_VARIABLE[component] as string]);
      expect(paths.get(component)?.has(url?.[2] ?? ""), `${name} serves ${url?.[2]}`).toBe(true);
    }
  });

  it("builds multi-stage on node:20-slim with npm ci and npm run build, and runs as a non-root user", () => {
    const dockerfile = read("Dockerfile");
    const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\w+)$/gm)].map((m) => ({ image: m[1], name: m[2] }));
    expect(stages.map((st) => st.image)).toEqual(stages.map(() => "node:20-slim"));
    expect(stages.map((st) => st.name)).toEqual(["manifests", "build", "runtime"]);
    // Dependencies install from the manifests alone (cached layer), then the full source builds.
    expect(dockerfile.indexOf("RUN npm ci")).toBeGreaterThan(dockerfile.indexOf("COPY --from=manifests"));
    expect(dockerfile.indexOf("RUN npm run build")).toBeGreaterThan(dockerfile.lastIndexOf("COPY . ."));
    expect(dockerfile).toMatch(/^USER node$/m);
    const cmd = JSON.stringify(startCommandOf("gateway")).replaceAll(",", ", ");
    expect(dockerfile.slice(dockerfile.indexOf("AS runtime")).split("\n")).toContain(`CMD ${cmd}`);
  });
});

describe("Grafana dashboard and Prometheus alerts", () => {
  const dashboard = z
    .object({ uid: z.string(), title: z.string(), panels: z.array(z.looseObject({ type: z.string(), title: z.string(), targets: z.array(z.looseObject({ expr: z.string().min(1) })).optional() })) })
    .passthrough()
    .parse(JSON.parse(read("infra/grafana/tasklane-dashboard.json")));
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr })));

  const rules = z
    .object({
      groups: z.array(
        z.object({
          name: z.string(),
          rules: z.array(
            z.strictObject({
              alert: z.string().regex(/^Tasklane[A-Z][A-Za-z0-9]+$/),
              expr: z.string().min(1),
              for: z.string().regex(/^\d+[smh]$/),
              labels: z.object({ severity: z.enum(["warning", "critical"]) }).catchall(z.string()),
              annotations: z.object({ summary: z.string().min(1), description: z.string().min(1) }).catchall(z.string()),
            }),
          ).min(1),
        }),
      ).min(1),
    })
    .strict()
    .parse(loadYaml("infra/prometheus/alerts.yml")[0]);
  const alerts = rules.groups.flatMap((g) => g.rules);

  it("every dashboard and alert query reads only metrics the apps register", () => {
    for (const { where, expr } of [...exprs, ...alerts.map((a) => ({ where: a.alert, expr: a.expr }))]) {
      const names = metricNamesIn(expr);
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(isRegistered(name, metrics), `${where}: ${name}`).toBe(true);
    }
  });

  it("the dashboard covers throughput, latency, backlog, recovery and delivery", () => {
    const used = new Set(exprs.flatMap((e) => metricNamesIn(e.expr)));
    for (const name of [
      "tasklane_task_outcomes_total",
      "tasklane_task_start_delay_seconds_bucket",
      "tasklane_queue_depth",
      "tasklane_oldest_queued_age_seconds",
      "tasklane_dead_letter_tasks",
      "tasklane_lease_expirations_total",
      "tasklane_notifier_deliveries_total",
      "tasklane_api_requests_total",
    ]) expect(used.has(name), name).toBe(true);
    expect(exprs.some((e) => e.expr.startsWith("histogram_quantile(0.5,"))).toBe(true);
    expect(exprs.some((e) => e.expr.startsWith("histogram_quantile(0.99,"))).toBe(true);
  });

  it("alert rules are well formed (unique names, balanced brackets, templated summaries)", () => {
    const names = alerts.map((a) => a.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const a of alerts) {
      const stripped = a.expr.replace(/"(?:[^"\\]|\\.)*"/g, "");
      for (const [open, close] of [["(", ")"], ["[", "]"], ["{", "}"]] as const) {
        expect(stripped.split(open).length, `${a.alert} ${open}${close}`).toBe(stripped.split(close).length);
      }
      expect(a.annotations.summary.split("{{").length, a.alert).toBe(a.annotations.summary.split("}}").length);
    }
  });

  it("alerts on DLQ growth, oldest queued age, start delay p99, webhook failures, held worker outcomes and a missing scheduler or worker", () => {
    const reads = (metric: string) => alerts.some((a) => metricNamesIn(a.expr).includes(metric));
    for (const metric of [
      "tasklane_dead_letter_tasks",
      "tasklane_oldest_queued_age_seconds",
      "tasklane_task_start_delay_seconds_bucket",
      "tasklane_notifier_deliveries_total",
      "tasklane_worker_held_outcomes",
    ]) {
      expect(reads(metric), metric).toBe(true);
    }
    for (const app of ["scheduler", "worker"]) expect(alerts.some((a) => a.expr.includes(`absent(`) && a.expr.includes(`app="${app}"`)), app).toBe(true);
  });
});

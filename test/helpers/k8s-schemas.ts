/**
 * Zod shapes of the Kubernetes objects infra/k8s ships: only the fields the
 * infra test checks are spelled out; everything else passes through.
 */
import { z } from "zod";

export const labels = z.record(z.string(), z.string());
export const k8sObject = z.looseObject({ apiVersion: z.string().min(1), kind: z.string().min(1), metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }) });
export const probe = z.looseObject({ httpGet: z.looseObject({ path: z.string().startsWith("/"), port: z.union([z.string(), z.number()]) }) });
export const container = z.looseObject({
  name: z.string(),
  image: z.string().regex(/^[\w./-]+:[\w.-]+$/, "an image with an explicit tag"),
  command: z.array(z.string()),
  ports: z.array(z.looseObject({ name: z.string().optional(), containerPort: z.number().int() })).default([]),
  env: z
    .array(z.looseObject({ name: z.string(), value: z.string().optional(), valueFrom: z.looseObject({ secretKeyRef: z.object({ name: z.string(), key: z.string() }).optional() }).optional() }))
    .default([]),
  envFrom: z.array(z.looseObject({ configMapRef: z.object({ name: z.string() }).optional(), secretRef: z.object({ name: z.string() }).optional() })).default([]),
  resources: z.object({ requests: z.object({ cpu: z.string(), memory: z.string() }), limits: z.looseObject({ memory: z.string() }) }),
  livenessProbe: probe.optional(),
  readinessProbe: probe.optional(),
  startupProbe: probe.optional(),
});
export const podTemplate = z.object({
  metadata: z.looseObject({ labels }),
  spec: z.looseObject({ containers: z.array(container).min(1), securityContext: z.looseObject({ runAsNonRoot: z.literal(true) }) }),
});
export const deployment = k8sObject.extend({ spec: z.looseObject({ selector: z.object({ matchLabels: labels }), template: podTemplate }) });
export const job = k8sObject.extend({ spec: z.looseObject({ template: podTemplate }) });
export const service = k8sObject.extend({ spec: z.looseObject({ selector: labels, ports: z.array(z.looseObject({ port: z.number(), targetPort: z.union([z.string(), z.number()]) })).min(1) }) });
export const selectorSpec = k8sObject.extend({ spec: z.looseObject({ selector: z.object({ matchLabels: labels }) }) });
export const hpa = k8sObject.extend({ spec: z.looseObject({ scaleTargetRef: z.looseObject({ kind: z.literal("Deployment"), name: z.string() }), metrics: z.array(z.looseObject({ type: z.string() })).min(1) }) });
export const scaledObject = k8sObject.extend({
  spec: z.looseObject({ scaleTargetRef: z.looseObject({ name: z.string() }), triggers: z.array(z.object({ type: z.string(), metadata: z.record(z.string(), z.string()) })).min(1) }),
});
export const configData = k8sObject.extend({ data: z.record(z.string(), z.string()).optional(), stringData: z.record(z.string(), z.string()).optional() });
export type Container = z.infer<typeof container>;
export type Deployment = z.infer<typeof deployment>;

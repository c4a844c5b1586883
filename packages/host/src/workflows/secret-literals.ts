import { type AgentPlan, type JsonSchema, sealPlanSecretLiterals, sealSecretLiterals } from '@fengyu/protocol';

/**
 * A workflow definition never stores a write-only argument's value (a password typed into an
 * e-mail step): in the plan and in the canvas graph, each such literal is saved as the one
 * marker `[redacted]` (`sealSecretLiterals`); whole references (`{{inputs.password}}`) stay. At
 * dispatch the marker is left out of the call (`dropRedactedSecrets`), so the tool sees the field
 * as not given rather than taking the marker for the secret.
 */

type SchemaOf = (tool: string) => JsonSchema | undefined;

export function sealPlanSecrets(plan: AgentPlan, schemaOf: SchemaOf): AgentPlan {
  return sealPlanSecretLiterals(plan, schemaOf);
}

type Loose = Record<string, unknown>;
const isObject = (v: unknown): v is Loose => !!v && typeof v === 'object' && !Array.isArray(v);

/** The saved canvas graph (kept as the client sent it): its tool nodes' arguments, sealed alike. */
export function sealGraphSecrets(graph: Loose, schemaOf: SchemaOf): Loose {
  if (!Array.isArray(graph.nodes)) return graph;
  const before = graph.nodes as unknown[];
  const nodes = before.map((n) => {
    if (!isObject(n) || n.type !== 'tool' || !isObject(n.tool) || typeof n.tool.name !== 'string' || !isObject(n.data) || !isObject(n.data.arguments)) return n;
    const args = sealSecretLiterals(n.data.arguments, schemaOf(n.tool.name));
    return args === n.data.arguments ? n : { ...n, data: { ...n.data, arguments: args } };
  });
  return nodes.every((n, i) => n === before[i]) ? graph : { ...graph, nodes };
}

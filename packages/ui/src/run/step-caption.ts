/**
 * How a step is named in a list: its title, else its id; the tool id beside it only when it
 * adds something (an unnamed step whose id is its tool's name shows that name once, not
 * "excel_analyze excel_analyze").
 */
export function stepCaption(step: { id: string; title?: string; tool?: string }): { title: string; tool?: string } {
  const title = step.title || step.id;
  return step.tool && step.tool !== title ? { title, tool: step.tool } : { title };
}

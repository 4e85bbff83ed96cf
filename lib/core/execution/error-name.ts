/** What an event names an error by: its `name`, or its `typeof` when it is not an `Error`. */
export function errorName(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (error instanceof Error) return error.name;
  return typeof error;
}

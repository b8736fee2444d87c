/** Whether dist/ holds a build of the sources as they are (scripts/dist-current.mjs). */
export function distIsCurrent(root: string, opts?: { ui?: boolean }): boolean;

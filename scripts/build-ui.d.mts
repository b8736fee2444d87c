/** Types of scripts/build-ui.mjs (the UI test imports it). */
export declare const UI_OUT: string;
/** Bundles the web explorer into `outDir` (default dist/ui/). */
export declare function buildUi(outDir?: string): Promise<void>;

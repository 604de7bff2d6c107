// Types of scripts/chromium.mjs (a plain script, so that `npm test` can run it before anything is built).
export declare const CHROMIUM_ARGS: string[];
export declare const CHROMIUM_CANDIDATES: string[];
export declare const INSTALL_HINT: string;
export declare function findChromium(env?: NodeJS.ProcessEnv): Promise<string | null>;

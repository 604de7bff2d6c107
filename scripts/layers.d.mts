// Types of scripts/layers.mjs.
/** The source tree's layers, lowest first: folders of src/ (and workers/). */
export declare const LAYERS: readonly (readonly string[])[];
/** The files of a folder of the layered tree. */
export declare function folderGlob(folder: string): string;

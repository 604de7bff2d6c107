// What the Cite dialog shows: BibTeX for the paper collapse-lab reproduces and for collapse-lab
// itself. The same facts as CITATION.cff (test/app/cite.test.ts checks that they agree and that
// both entries parse). The paper's entry is the one its authors publish in the SCOPE repository.
import { version } from "../../../package.json";

export const PAPER = {
  title: "One Frozen Simulator Is Not Enough: Simulator Collapse in Multi-Agent RL",
  arxiv: "2608.12253",
  url: "https://arxiv.org/abs/2608.12253",
  code: "https://github.com/CHATS-lab/scope_usim",
} as const;

export const PAPER_BIBTEX = `@misc{yu2026onefrozen,
  title         = {One Frozen Simulator Is Not Enough: Simulator Collapse in Multi-Agent {RL}},
  author        = {Yu, Simon and Tomlin, Nicholas and Abdulhai, Marwa and Lu, Ximing and
                   Chong, Derek and Hou, Abe and Soylu, Dilara and Levine, Sergey and
                   Manning, Christopher D. and Shi, Weiyan},
  year          = {2026},
  eprint        = {${PAPER.arxiv}},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CL},
  note          = {Accepted to EMNLP 2026 Main},
  url           = {${PAPER.url}}
}`;

export const TOOL_TITLE =
  "collapse-lab: simulator collapse in multi-agent RL, and its fixes, in a browser tab";

export const TOOL_BIBTEX = `@misc{collapselab,
  title        = {collapse-lab: simulator collapse in multi-agent {RL}, and its fixes, in a browser tab},
  author       = {{The collapse-lab authors}},
  howpublished = {Software, version ${version}},
  note         = {Apache-2.0. Reproduces arXiv:${PAPER.arxiv}}
}`;

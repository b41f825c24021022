"""``python3 -m studymon.refstudy --config C --dir D [--resume]``: run the reference study."""

import sys

from studymon.refstudy.controller import main

sys.exit(main())

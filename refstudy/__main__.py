"""``python3 -m refstudy --config C --dir D [--resume]``: run the reference study."""

import sys

from refstudy.controller import main

sys.exit(main())

"""``python -m xlcalib.ground_truth [--pl]``: the dermatology certainty, xlcalib's setting next to the reference code's."""
from .example import main

raise SystemExit(main())

"""Every op family of the xla dialect; importing this package registers all op records."""
from . import contraction, control_flow, dynamic, elementwise, indexing, reduction, shape  # noqa: F401
from . import linalg_ops, random  # noqa: F401  (numerics: issue 5)
from . import collectives, side_effects  # noqa: F401  (side effects and replicas: issue 6)

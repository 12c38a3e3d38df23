"""Types of the C extension tswarp._tswarp (its functions are tswarp's public dtw, twed,
soft_dtw, distance, cdist, pdist, paired, dtw_path, info and empty_cache)."""

from typing import Any, Callable, Dict, Literal, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__version__: str
METRICS: Tuple[str, ...]

class NoDeviceError(ValueError): ...
class CudaError(RuntimeError): ...

# A series: array-like (len,) or (len, d) (or a GPU array: CuPy, torch, DLPack).
Series = Any
# A collection: (n, len) / (n, len, d) arrays, or a sequence of series.
Collection = Any
Device = str  # 'auto', 'cpu', 'cuda' or 'cuda:N'
Layout = Optional[Literal["channels_last", "channels_first"]]
Progress = Union[bool, None, Callable[[int, int], Any]]
Cost = Literal["sqeuclidean", "euclidean", "abs", "cosine", "cityblock", "l1", "manhattan"]
Metric = Union[str, Callable[..., float]]
Real = Union[float, int, np.floating, np.integer]

def dtw(a: Series, b: Series, *, cost: Cost = ..., window: Optional[Real] = ...,
        radius: Optional[Real] = ..., itakura_max_slope: Optional[Real] = ...,
        accumulated: bool = ..., device: Device = ..., layout: Layout = ...) -> Any: ...
def twed(a: Series, b: Series, *, nu: Real = ..., lmbda: Real = ..., p: Real = ...,
         ta: Optional[ArrayLike] = ..., tb: Optional[ArrayLike] = ...,
         window: Optional[Real] = ..., radius: Optional[Real] = ...,
         itakura_max_slope: Optional[Real] = ..., device: Device = ...,
         layout: Layout = ...) -> Any: ...
def soft_dtw(a: Series, b: Series, *, gamma: Real = ..., normalize: bool = ...,
             window: Optional[Real] = ..., radius: Optional[Real] = ...,
             itakura_max_slope: Optional[Real] = ..., device: Device = ...,
             layout: Layout = ...) -> Any: ...
def distance(a: Series, b: Series, metric: Metric = ..., **params: Any) -> Any: ...
def cdist(X: Collection, Y: Optional[Collection] = ..., *, metric: Metric = ...,
          n_jobs: Optional[int] = ..., progress: Progress = ..., device: Device = ...,
          layout: Layout = ..., tx: Optional[Collection] = ..., ty: Optional[Collection] = ...,
          **params: Any) -> Any: ...
def pdist(X: Collection, *, metric: Metric = ..., condensed: bool = ...,
          n_jobs: Optional[int] = ..., progress: Progress = ..., device: Device = ...,
          layout: Layout = ..., tx: Optional[Collection] = ..., **params: Any) -> Any: ...
def paired(X: Collection, Y: Collection, *, metric: Metric = ..., n_jobs: Optional[int] = ...,
           progress: Progress = ..., device: Device = ..., layout: Layout = ...,
           tx: Optional[Collection] = ..., ty: Optional[Collection] = ...,
           **params: Any) -> Any: ...
def dtw_path(a: Series, b: Series, *, step: str = ..., cost: Cost = ...,
             window: Optional[Real] = ..., radius: Optional[Real] = ...,
             itakura_max_slope: Optional[Real] = ..., accumulated: bool = ...,
             method: str = ..., memory_limit: Optional[int] = ..., device: Device = ...,
             n_jobs: Optional[int] = ..., progress: Progress = ...,
             layout: Layout = ...) -> Tuple[Any, float]: ...
def info() -> Dict[str, Any]: ...
def empty_cache(device: Optional[int] = ...) -> None: ...

# private entry points of the Python modules
def _subsequence_dtw(query: Series, reference: Series, **kwargs: Any) -> Tuple[Any, ...]: ...
def _segmental_dtw(*args: Any) -> Tuple[Any, ...]: ...
def _soft_dtw_grad_raw(*args: Any) -> Any: ...
def _soft_dtw_cost_grad_raw(*args: Any) -> Any: ...
def _shapelet_search(*args: Any, **kwargs: Any) -> Tuple[int, int, int, float, float, float, int]: ...
def _shapelet_top(*args: Any, **kwargs: Any) -> list: ...
def _shapelet_distances(*args: Any, **kwargs: Any) -> Tuple[NDArray[Any], ...]: ...

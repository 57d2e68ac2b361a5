"""The tracer: a `TorchFunctionMode` that records where tensors are made while inference
mode is on, and notes that origin on torch's inference-tensor errors.

This is the only module of gradlint that imports torch.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import torch
from torch.overrides import TorchFunctionMode

from gradlint.trace.annotation import Annotation, is_annotated, note
from gradlint.trace.frames import LIBRARY_BY_CODE, add_library_dir, frame_chain, is_library, user_frame
from gradlint.trace.kinds import ErrorKind, kind_of
from gradlint.trace.objects import tensors_named_on_line, tensors_within
from gradlint.trace.origins import Origin, OriginTable, Region, RegionStacks

_Tensor = torch.Tensor
_is_inference_mode_enabled = torch.is_inference_mode_enabled
_SET_DATA = torch._C.TensorBase.data.__set__  # `tensor.data = value`, as the mode sees it
_QUOTABLE_KEPT = 8  # errors the mode noted that a later error may quote
_CHAIN_LIMIT = 8  # frames kept between a region's frame and the origin
_LEARNING_CALLS = 8  # calls of a function checked for returning views of its arguments
_ORIGIN_CACHE = 4096


class OriginMode(TorchFunctionMode):
    """Calls every torch function unchanged; while inference mode is on, records the
    origin of the tensors it returns; notes the origin on an inference-tensor error."""

    def __init__(self, tracer: "Tracer"):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        __tracebackhide__ = True  # noqa: F841  (pytest leaves this frame out of tracebacks)
        if kwargs is None:
            kwargs = {}
        try:
            result = func(*args, **kwargs)
        except RuntimeError as error:
            try:
                self.tracer.torch_raised(error, args, kwargs, sys._getframe(1))
            except Exception as failure:  # the tracer never changes what the program sees
                self.tracer.failed(failure)
            raise
        if _is_inference_mode_enabled():
            try:
                self.tracer.record(result, func, args, kwargs, sys._getframe(1))
            except Exception as failure:
                self.tracer.failed(failure)
        elif result is None and func == _SET_DATA:
            try:
                self.tracer.data_set(args)
            except Exception as failure:
                self.tracer.failed(failure)
        return result


class Tracer:
    def __init__(self) -> None:
        self.origins = OriginTable()
        self.regions = RegionStacks()
        self.annotations: List[Annotation] = []
        self.failures = 0
        self._saved = threading.local()  # the tensors a custom Function's forward saved last
        self._mode: Optional[OriginMode] = None
        self._patches: List[Tuple[object, str, object]] = []
        self._thread_hook = None
        self._alias_checks: Dict[object, int] = {}  # function -> calls checked; -1: views
        self._same_frame_origins: Dict[tuple, Origin] = {}
        # the last errors the mode noted with an origin, for an error torch raises quoting one
        # of them after catching it (`load_state_dict` gathers its copies' errors into its own)
        self._quotable: List[Tuple[str, Origin, bool]] = []

    # --- starting and stopping ------------------------------------------------------------

    def start(self) -> "Tracer":
        add_library_dir(os.path.dirname(torch.__file__))
        self._patch_inference_mode()
        self._patch(torch.autograd.function.FunctionCtx, "save_for_backward",
                    self._saving(torch.autograd.function.FunctionCtx.save_for_backward))
        self._thread_hook = threading.excepthook
        threading.excepthook = self._thread_excepthook
        self._mode = OriginMode(self)
        self._mode.__enter__()
        return self

    def stop(self) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        if self._thread_hook is not None:
            threading.excepthook = self._thread_hook
            self._thread_hook = None
        for owner, name, original in reversed(self._patches):
            setattr(owner, name, original)
        self._patches.clear()

    def __enter__(self) -> "Tracer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _patch(self, owner, name: str, replacement) -> None:
        self._patches.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, replacement)

    def _patch_inference_mode(self) -> None:
        """`inference_mode.__enter__` learns the region: the frame entering it is the
        `with` statement's, or torch's decorator wrapper, whose `func` is the function."""
        manager_class = torch.autograd.grad_mode.inference_mode
        enter, exit_ = manager_class.__enter__, manager_class.__exit__
        regions = self.regions

        def traced_enter(manager):
            enter(manager)
            frame = sys._getframe(1)
            regions.push(manager, _region_entered(manager, frame), frame)

        def traced_exit(manager, exc_type, exc_value, traceback):
            regions.pop(manager)
            return exit_(manager, exc_type, exc_value, traceback)

        self._patch(manager_class, "__enter__", traced_enter)
        self._patch(manager_class, "__exit__", traced_exit)

    def _saving(self, save_for_backward):
        """Outside inference mode, a custom Function's forward that saves an inference tensor
        makes `apply` raise E_SAVE after `forward` returned, where no frame holds the tensor
        any more: its origin is kept here (not the tensor) until the next save."""
        saved, origin_of = self._saved, self.origin_of

        def traced_save_for_backward(ctx, *tensors):
            if not _is_inference_mode_enabled():
                with torch._C.DisableTorchFunction():
                    saved.origins = [
                        (origin, isinstance(tensor, torch.nn.Parameter))
                        for tensor in tensors if isinstance(tensor, _Tensor) and tensor.is_inference()
                        for origin in (origin_of(tensor),) if origin is not None]
            return save_for_backward(ctx, *tensors)

        traced_save_for_backward.__wrapped__ = save_for_backward
        return traced_save_for_backward

    # --- recording (the hot path) -----------------------------------------------------------

    def record(self, result, func, args, kwargs, frame) -> None:
        if result is None:
            if func == _SET_DATA:
                self.data_set(args)
        elif isinstance(result, _Tensor):
            self._record_tensor(result, func, args, kwargs, frame)
        elif isinstance(result, (tuple, list)):
            for item in result:
                if isinstance(item, _Tensor):
                    self._record_tensor(item, func, args, kwargs, frame)

    def _record_tensor(self, tensor, func, args, kwargs, frame) -> None:
        origins = self.origins
        entry = origins.entries.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            return  # keeps the origin it was first seen with (an in-place update returns it)
        for argument in args:
            if argument is tensor:
                given = True
                break
        else:
            given = kwargs.get("out") is tensor
        if given:  # an in-place update or a no-op conversion: only an unseen inference tensor
            if tensor.is_inference():  # (a Parameter wrapped outside torch functions) is new
                self._record_here(tensor, frame)
            return
        base = tensor._base
        if base is not None:  # a view of a normal tensor (inference mode tracks no other views)
            base_origin = origins.get(base)
            if base_origin is not None:
                origins.add(tensor, base_origin)
                return
        elif not tensor.is_inference():
            return
        else:
            checks = self._alias_checks.get(func, 0)
            if checks < _LEARNING_CALLS:
                shared = self._shared_origin(tensor, args)
                if shared is not None:
                    self._alias_checks[func] = -1  # returns views: always look
                    origins.add(tensor, shared)
                    return
                if checks >= 0:
                    self._alias_checks[func] = checks + 1
        self._record_here(tensor, frame)

    def data_set(self, args) -> None:
        """`tensor.data = value` (as `Module.to` and `_apply` do to parameters): the tensor
        now holds `value`'s data, an inference tensor's or not, and takes its origin."""
        tensor, value = args[0], args[1]
        origin = self.origin_of(value) if value.is_inference() else None
        if origin is not None:
            self.origins.add(tensor, origin)
        else:
            self.origins.forget(tensor)

    def _shared_origin(self, tensor, args) -> Optional[Origin]:
        """The origin of a recorded argument whose storage `tensor` shares: a view made
        under inference mode, which does not track views (`_base` is None)."""
        storage = None
        for argument in args:
            if not isinstance(argument, _Tensor):
                continue
            origin = self.origins.get(argument)
            if origin is None:
                continue
            if storage is None:
                storage = tensor.untyped_storage().data_ptr()
                if storage == 0:
                    return None
            if argument.untyped_storage().data_ptr() == storage:
                return origin
        return None

    def _record_here(self, tensor, frame) -> None:
        user = frame if LIBRARY_BY_CODE.get(frame.f_code) is False else user_frame(frame)
        if user is None:
            return
        regions = self.regions.open
        region, stop = (regions[-1][1], regions[-1][2]) if regions else (None, None)
        if user is stop:  # made in the region's own frame: one Origin per line and region
            key = (user.f_code, user.f_lineno, region)
            origin = self._same_frame_origins.get(key)
            if origin is None:
                if len(self._same_frame_origins) > _ORIGIN_CACHE:
                    self._same_frame_origins.clear()
                origin = self._same_frame_origins[key] = Origin(
                    user.f_code, user.f_lineno, region, ((user.f_code, user.f_lineno),))
        else:
            origin = Origin(user.f_code, user.f_lineno, region, _chain(user, stop))
        self.origins.add(tensor, origin)

    # --- annotating ------------------------------------------------------------------------

    def torch_raised(self, error: RuntimeError, args, kwargs, frame) -> None:
        """The mode saw torch raise `error` from a call with these arguments."""
        kind = kind_of(error)
        if kind is None or is_annotated(error):
            return
        candidates = list(tensors_within(list(args) + list(kwargs.values())))
        self._annotate(error, kind, candidates, frame_chain(frame), seen_by="mode")

    def annotate_escaped(self, error: BaseException) -> None:
        """`error` escaped the program (or a test) without the mode annotating it: torch
        raised it where no torch function is intercepted (`nn.Parameter(t)`, a custom
        Function's saved tensors) or in a thread the mode is not on. The tensor is looked
        for in the frames of its traceback."""
        try:
            self._annotate_escaped(error)
        except Exception as failure:
            self.failed(failure)

    def _annotate_escaped(self, error: BaseException) -> None:
        for each in _exception_chain(error):
            kind = kind_of(each)
            if kind is None or is_annotated(each):
                continue
            frames = _traceback_frames(each.__traceback__)
            chain = [(frame.f_code, line) for frame, line in frames]
            saved = getattr(self._saved, "origins", None) if kind.key == "E_SAVE" else None
            if saved:
                origin, is_parameter = saved[0]
                self._saved.origins = None  # used: a later error is another Function's
                self._annotate_with(each, kind, origin, is_parameter, chain, seen_by="exit")
                continue
            with torch._C.DisableTorchFunction():
                candidates = self._escaped_candidates(frames)
            self._annotate(each, kind, candidates, chain, seen_by="exit")

    def _escaped_candidates(self, frames) -> List[object]:
        candidates: List[object] = []
        for frame, line in reversed(frames):  # innermost first
            candidates.extend(tensors_named_on_line(frame, line))
            if is_library(frame.f_code):
                candidates.extend(tensors_within(frame.f_locals.values()))
        return candidates

    def _annotate(self, error, kind: ErrorKind, candidates: Sequence[object],
                  raised_chain, seen_by: str) -> None:
        with torch._C.DisableTorchFunction():
            tensor, origin = self._first_with_origin(kind, candidates)
            is_parameter = isinstance(tensor, torch.nn.Parameter)
        if origin is not None and seen_by == "mode":
            self._quotable = [*self._quotable[-(_QUOTABLE_KEPT - 1):], (_first_line(error), origin, is_parameter)]
        elif origin is None and seen_by == "exit":
            origin, is_parameter = self._quoted_origin(error, is_parameter)
        self._annotate_with(error, kind, origin, is_parameter, raised_chain, seen_by)

    def _quoted_origin(self, error: BaseException, is_parameter: bool) -> Tuple[Optional[Origin], bool]:
        """The origin of the latest error the mode noted that `error`'s message quotes."""
        message = str(error)
        for quoted, origin, quoted_is_parameter in reversed(self._quotable):
            if quoted and quoted in message:
                return origin, quoted_is_parameter
        return None, is_parameter

    def _annotate_with(self, error, kind: ErrorKind, origin: Optional[Origin], is_parameter: bool,
                       raised_chain, seen_by: str) -> None:
        rule = (kind.parameter_rule if is_parameter else None) or kind.rule
        annotation = Annotation.build(kind, rule, error, origin, raised_chain, seen_by)
        self.annotations.append(annotation)
        note(error, annotation.text())

    def _first_with_origin(self, kind: ErrorKind, candidates) -> Tuple[object, Optional[Origin]]:
        suspects = [tensor for tensor in _unique(candidates)
                    if kind.key == "E_VIEW" or tensor.is_inference()]
        for tensor in suspects:
            origin = self.origin_of(tensor)
            if origin is not None:
                return tensor, origin
        return (suspects[0] if suspects else None), None

    def origin_of(self, tensor) -> Optional[Origin]:
        """The recorded origin of `tensor`, of its base, or of a tensor sharing its storage
        (a Parameter wraps the tensor it was made from; a `.detach()` made outside the mode)."""
        origin = self.origins.get(tensor)
        if origin is None and tensor._base is not None:
            origin = self.origins.get(tensor._base)
        if origin is None:
            origin = self._origin_by_storage(tensor)
        return origin

    def _origin_by_storage(self, tensor) -> Optional[Origin]:
        try:
            pointer = tensor.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):
            return None
        if pointer == 0:
            return None
        for other, origin in self.origins.live():
            try:
                if other.untyped_storage().data_ptr() == pointer:
                    return origin
            except (RuntimeError, NotImplementedError):
                continue
        return None

    def failed(self, failure: Exception) -> None:
        """A bug of the tracer: said once on stderr, and the program goes on untouched."""
        self.failures += 1
        if self.failures == 1:
            print(f"gradlint trace: internal error (the program is not affected): "
                  f"{type(failure).__name__}: {failure}", file=sys.stderr)

    def _thread_excepthook(self, args) -> None:
        if args.exc_value is not None:
            self.annotate_escaped(args.exc_value)
        self._thread_hook(args)


def _chain(user, stop) -> Tuple[Tuple[object, int], ...]:
    """(code, line) of the program's frames from `stop` (the frame that entered the region)
    in to `user`, outermost first, at most _CHAIN_LIMIT."""
    chain = []
    walked = user
    while walked is not None and len(chain) < _CHAIN_LIMIT:
        if not is_library(walked.f_code):
            chain.append((walked.f_code, walked.f_lineno))
        if walked is stop:
            break
        walked = walked.f_back
    chain.reverse()
    return tuple(chain)


def _region_entered(manager, frame) -> Optional[Region]:
    if not getattr(manager, "mode", True):
        return None  # inference_mode(False) closes no region and opens none
    user = user_frame(frame)
    if frame is user:
        return Region(frame.f_code, frame.f_lineno, decorated=False)
    decorated = frame.f_locals.get("func")  # torch's decorate_context / generator_context
    code = getattr(decorated, "__code__", None)
    if code is not None and not is_library(code):
        return Region(code, code.co_firstlineno, decorated=True)
    if user is not None:
        return Region(user.f_code, user.f_lineno, decorated=False)
    return None


def _first_line(error: BaseException) -> str:
    lines = str(error).splitlines()
    return lines[0] if lines else ""


def _exception_chain(error: BaseException) -> Iterator[BaseException]:
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def _traceback_frames(traceback) -> List[Tuple[object, int]]:
    frames = []
    while traceback is not None:
        frames.append((traceback.tb_frame, traceback.tb_lineno))
        traceback = traceback.tb_next
    return frames


def _unique(tensors: Iterable[object]) -> Iterator[object]:
    seen = set()
    for tensor in tensors:
        if id(tensor) not in seen:
            seen.add(id(tensor))
            yield tensor

"""The main window's model handling: the first-run offer, the settings dialog, LM Studio.

A mixin of MainWindow (it uses the window's panes, worker hosts and settings);
kept apart because it is the one part of the window about models, not papers.
"""

from __future__ import annotations

import copy
import shutil
from functools import partial
from pathlib import Path

from PySide6.QtCore import QProcess, QTimer

from app.core.settings import Settings

from ..models import jobs


class ModelSetup:
    def check_models(self) -> None:
        handle = self.host.submit("models", jobs.model_state)
        handle.finished.connect(self._model_state)

    def _model_state(self, state: jobs.ModelState) -> None:
        if state.ready:
            self.models_label.setText(f"Chat: {_short(state.chat)}  ·  Embeddings: {_short(state.embedding)}")
            if state.uncalibrated_judge and state.uncalibrated_judge not in self._calibration_offered:
                self._calibration_offered.add(state.uncalibrated_judge)  # offered once a session, not at every check
                self.research_pane.banner.show_message(
                    "info", f"The judge ({_short(state.uncalibrated_judge)}) is not calibrated yet.",
                    "Until it is, its support verdicts use cut-offs set for another model. Calibrating reads "
                    "170 hand-labelled claims once, in the background, and can be cancelled.",
                    ["calibrate-judge"],
                )
            return
        self.models_label.setText("No model set up")
        exc = state.problem
        if state.needs_setup:
            self.research_pane.banner.show_message(
                "warning", "No language model is set up yet.",
                "Install the offline starter models, or use LM Studio. Browsing the library works meanwhile.",
                ["setup-models", "choose-model"],
            )
            if not self._first_run_shown:
                self._first_run_shown = True
                QTimer.singleShot(0, self, self.show_first_run)
        elif exc is not None:
            self.research_pane.banner.show_error(exc, ("choose-model",))

    def show_first_run(self):
        from ..models.first_run import FirstRunDialog

        dialog = FirstRunDialog(
            self.settings,
            submit_setup=lambda: self.aux.submit("setup", jobs.setup_models),
            list_models=self._list_models,
            parent=self,
        )
        dialog.models_installed.connect(self._models_installed)
        dialog.configured.connect(self.apply_settings)
        dialog.open_settings.connect(lambda: QTimer.singleShot(0, self, lambda: self.open_settings("Models")))
        dialog.setModal(True)
        dialog.show()
        self.first_run_dialog = dialog
        return dialog

    def _models_installed(self) -> None:
        self.research_pane.banner.hide()
        self.apply_settings(self.settings)

    def _list_models(self, cfg):
        return self.aux.submit("list-models", partial(jobs.list_remote_models, cfg=cfg))

    def calibrate_judge(self):
        """Open the judge's tab and calibrate it there (progress and Cancel are the tab's)."""
        self.research_pane.banner.hide()
        dialog = self.open_settings("Judge and rating")
        dialog.measure.start_calibration()
        return dialog

    def open_settings(self, tab: str = ""):
        from .settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.settings, library_flag=self.library_flag, list_models=self._list_models,
                                run_job=self.host.submit, parent=self)
        dialog.setup_models_requested.connect(lambda: (dialog.reject(), QTimer.singleShot(0, self, self.show_first_run)))
        if tab:
            dialog.show_tab(tab)
        dialog.accepted.connect(lambda: self.apply_settings(dialog.result_settings()))
        dialog.open()
        self.settings_dialog = dialog
        return dialog

    def apply_settings(self, settings: Settings) -> None:
        """Save new settings, re-theme, and hand them to the worker (models reload lazily)."""
        old = self.settings
        self.settings = copy.deepcopy(settings)
        try:
            self.settings.save()
        except OSError as exc:
            self.research_pane.banner.show_message("error", "Could not save the settings.", str(exc))
        if old.theme != settings.theme:
            self.apply_theme()
        self.research_pane.banner.hide()
        handle = self.host.submit("settings", partial(jobs.apply_settings, settings=self.settings, library=self.library_flag))
        handle.finished.connect(self.library._loaded)
        handle.failed.connect(lambda exc: self.library_pane.banner.show_error(exc, ("settings",)))
        self.check_models()

    def start_lmstudio(self) -> None:
        """Start LM Studio's server with its `lms` command if it is installed, then retry."""
        lms = shutil.which("lms")
        if lms is None:
            self.research_pane.banner.show_message(
                "warning", "LM Studio's command-line tool (lms) was not found.",
                "Start LM Studio and its local server (Developer tab → Start Server), then press Retry. "
                "If it runs on another computer, set its host in Settings.",
                ["retry", "settings"],
            )
            return
        started = QProcess.startDetached(lms, ["server", "start"])
        ok = started[0] if isinstance(started, tuple) else bool(started)
        self.research_pane.banner.show_message(
            "info" if ok else "error",
            "Starting LM Studio's server…" if ok else "Could not run `lms server start`.",
            "Press Retry when it is up.", ["retry"],
        )


def _short(description: str) -> str:
    """'llama.cpp: /long/path/model.gguf' → 'model.gguf'."""
    head, _, tail = description.partition(": ")
    if head.startswith("llama.cpp"):
        return Path(tail).name or tail
    return description

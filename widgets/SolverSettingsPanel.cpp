#include "widgets/SolverSettingsPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QThread>

#include <cmath>

namespace pbd {

SolverSettingsPanel::SolverSettingsPanel(QWidget* parent)
    : QWidget(parent) {
    QWidget* panel = this;
    auto* form = new QFormLayout(panel);
    timeStep_ = new QDoubleSpinBox(panel);
    timeStep_->setObjectName(QStringLiteral("timeStep"));
    timeStep_->setDecimals(3);
    timeStep_->setRange(0.01, 100.0);
    timeStep_->setSuffix(tr(" ms"));
    timeStep_->setToolTip(tr("Time step of one frame (all its substeps)"));
    substeps_ = new QSpinBox(panel);
    substeps_->setObjectName(QStringLiteral("substeps"));
    substeps_->setRange(1, 100);
    iterations_ = new QSpinBox(panel);
    iterations_->setObjectName(QStringLiteral("iterations"));
    iterations_->setRange(1, 1000);
    threads_ = new QSpinBox(panel);
    threads_->setObjectName(QStringLiteral("threads"));
    threads_->setRange(0, 256);
    threads_->setSpecialValueText(tr("all cores"));
    threads_->setToolTip(tr("Solver threads, for the particles and the rigid bodies (the rigid "
                            "bodies move the same on any number); one core is left to the window "
                            "by default"));
    threads_->setValue(std::max(1, QThread::idealThreadCount() - 1));
    form->addRow(tr("Time step"), timeStep_);
    form->addRow(tr("Substeps"), substeps_);
    exactAngularMomentum_ = new QCheckBox(tr("Exact angular momentum"), panel);
    exactAngularMomentum_->setObjectName(QStringLiteral("exactAngularMomentum"));
    exactAngularMomentum_->setToolTip(
        tr("Project distance constraints along their edge at the start of the substep (SHAKE) "
           "instead of as it is now (PBD): spinning cloth and ropes, and cloth on rigid "
           "bodies, then keep their angular momentum exactly"));
    continuousCollision_ = new QCheckBox(tr("Continuous collision"), panel);
    continuousCollision_->setObjectName(QStringLiteral("continuousCollision"));
    continuousCollision_->setToolTip(
        tr("Follow cloth and soft-body surfaces through each substep, and move the particles "
           "whose moves would make two of them cross together with what they would cross: "
           "surfaces that start apart never pass through each other (costs one to three steps "
           "again)"));
    form->addRow(tr("Iterations"), iterations_);
    form->addRow(exactAngularMomentum_);
    form->addRow(continuousCollision_);
    form->addRow(tr("Threads"), threads_);
    // Rigid bodies (§5): the projected Gauss-Seidel solve and its stabilisation, each switch
    // taking effect at the next step, so its effect on a stack can be watched.
    rigidSettings_ = new QGroupBox(tr("Rigid bodies"), panel);
    rigidSettings_->setObjectName(QStringLiteral("rigidSettings"));
    rigidSettings_->setToolTip(tr("Only scenes with rigid bodies"));
    auto* rigidForm = new QFormLayout(rigidSettings_);
    rigidIterations_ = new QSpinBox(rigidSettings_);
    rigidIterations_->setObjectName(QStringLiteral("rigidIterations"));
    rigidIterations_->setRange(1, 1000);
    rigidIterations_->setToolTip(tr("Projected Gauss-Seidel sweeps per substep"));
    rigidSubsteps_ = new QSpinBox(rigidSettings_);
    rigidSubsteps_->setObjectName(QStringLiteral("rigidSubsteps"));
    rigidSubsteps_->setRange(1, 64);
    rigidSubsteps_->setToolTip(
        tr("Substeps per step on contacts detected once (the soft step): each sweeps, moves the "
           "bodies and relaxes; the separations follow the bodies"));
    rigidContactHertz_ = new QDoubleSpinBox(rigidSettings_);
    rigidContactHertz_->setObjectName(QStringLiteral("rigidContactHertz"));
    rigidContactHertz_->setRange(0, 1000);
    rigidContactHertz_->setDecimals(1);
    rigidContactHertz_->setSuffix(tr(" Hz"));
    rigidContactHertz_->setSpecialValueText(tr("rigid"));
    rigidContactHertz_->setToolTip(
        tr("Soft contacts: the push-out is a damped spring of this frequency (Box2D v3's soft "
           "step; try 4 substeps of 1 sweep at 30-60 Hz). 'rigid': the source's correction"));
    rigidWarmStart_ = new QCheckBox(tr("Warm start"), rigidSettings_);
    rigidWarmStart_->setObjectName(QStringLiteral("rigidWarmStart"));
    rigidWarmStart_->setToolTip(tr("Start each step from the last step's contact impulses, "
                                   "matched by feature (vertex of one body on face of the other)"));
    rigidSeparatePush_ = new QCheckBox(tr("Separate push"), rigidSettings_);
    rigidSeparatePush_->setObjectName(QStringLiteral("rigidSeparatePush"));
    rigidSeparatePush_->setToolTip(
        tr("Rigid contacts with warm starting: the push out of penetrations moves the bodies "
           "but is not kept in their velocities (split impulse), so tall stacks do not rock. "
           "Off: it is, and the relax sweeps take it out again"));
    rigidStabilisation_ = new QComboBox(rigidSettings_);
    rigidStabilisation_->setObjectName(QStringLiteral("rigidStabilisation"));
    rigidStabilisation_->addItem(tr("Off"), int(StackStabilisation::Off));
    rigidStabilisation_->addItem(tr("Shock propagation"),
                                 int(StackStabilisation::ShockPropagation));
    rigidStabilisation_->addItem(tr("Weight amplification"),
                                 int(StackStabilisation::WeightAmplification));
    rigidStabilisation_->setToolTip(
        tr("What keeps stacks standing: the lower body of a contact held (shock propagation) or "
           "counted 1.4 times heavier (weight amplification)"));
    rigidSleeping_ = new QCheckBox(tr("Sleeping"), rigidSettings_);
    rigidSleeping_->setObjectName(QStringLiteral("rigidSleeping"));
    rigidSleeping_->setToolTip(tr("Islands at rest for half a second stop being simulated until "
                                  "something touches them (drawn grey-blue)"));
    rigidAggressiveSleep_ = new QCheckBox(tr("Aggressive sleep"), rigidSettings_);
    rigidAggressiveSleep_->setObjectName(QStringLiteral("rigidAggressiveSleep"));
    rigidAggressiveSleep_->setToolTip(
        tr("Bodies at rest keep their last contacts instead of detecting them again"));
    rigidIterations_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidStabilisation_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidForm->addRow(tr("Sweeps"), rigidIterations_);
    rigidForm->addRow(tr("Substeps"), rigidSubsteps_);
    rigidForm->addRow(tr("Contacts"), rigidContactHertz_);
    rigidSubsteps_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidContactHertz_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    rigidForm->addRow(tr("Stacks"), rigidStabilisation_);
    rigidForm->addRow(rigidWarmStart_);
    rigidForm->addRow(rigidSeparatePush_);
    rigidForm->addRow(rigidSleeping_);
    rigidForm->addRow(rigidAggressiveSleep_);
    rigidSettings_->setEnabled(false);
    form->addRow(rigidSettings_);
    connect(rigidIterations_, &QSpinBox::valueChanged, this, &SolverSettingsPanel::settingsEdited);
    connect(rigidSubsteps_, &QSpinBox::valueChanged, this, &SolverSettingsPanel::settingsEdited);
    connect(rigidContactHertz_, &QDoubleSpinBox::valueChanged, this,
            &SolverSettingsPanel::settingsEdited);
    connect(rigidStabilisation_, &QComboBox::currentIndexChanged, this,
            &SolverSettingsPanel::settingsEdited);
    for (QCheckBox* box :
         {rigidWarmStart_, rigidSeparatePush_, rigidSleeping_, rigidAggressiveSleep_}) {
        connect(box, &QCheckBox::toggled, this, &SolverSettingsPanel::settingsEdited);
    }
    // The air (Air Meshes §4): how often it is re-meshed and how bodies meet across it.
    airSettings_ = new QGroupBox(tr("Air mesh"), panel);
    airSettings_->setObjectName(QStringLiteral("airSettings"));
    airSettings_->setToolTip(tr("Only scenes with air (prepared with Air, or the air scenes)"));
    auto* airForm = new QFormLayout(airSettings_);
    airInterval_ = new QSpinBox(airSettings_);
    airInterval_->setObjectName(QStringLiteral("airInterval"));
    airInterval_->setRange(0, 10000);
    airInterval_->setSpecialValueText(tr("off"));
    airInterval_->setPrefix(tr("every "));
    airInterval_->setSuffix(tr(" step(s)"));
    airInterval_->setToolTip(
        tr("Re-mesh the air (edge and multi-face removal) every k steps so bodies can turn and "
           "slide; off keeps the air's memory of where everything was (layered cloth, the "
           "squash experiment)"));
    airIterations_ = new QSpinBox(airSettings_);
    airIterations_->setObjectName(QStringLiteral("airIterations"));
    airIterations_->setRange(-1, 1000);
    airIterations_->setSpecialValueText(tr("as constraints"));
    airIterations_->setToolTip(
        tr("Air projections per substep (the paper's dancer: 20 to its cloth's 10). 0 turns "
           "the air off: it follows the bodies without acting, and turned on again it brings "
           "tangled layers back in order"));
    airThreshold_ = new QDoubleSpinBox(airSettings_);
    airThreshold_->setObjectName(QStringLiteral("airThreshold"));
    airThreshold_->setRange(0.01, 1.0);
    airThreshold_->setDecimals(2);
    airThreshold_->setSingleStep(0.05);
    airThreshold_->setToolTip(tr("Air tets of a quality below this are improved (1 = regular)"));
    airDistance_ = new QDoubleSpinBox(airSettings_);
    airDistance_->setObjectName(QStringLiteral("airDistance"));
    airDistance_->setRange(0, 100);
    airDistance_->setDecimals(2);
    airDistance_->setSuffix(tr(" mm"));
    airDistance_->setToolTip(tr("Bodies facing each other across the air keep this far apart "
                                "(0 = off)"));
    airFriction_ = new QDoubleSpinBox(airSettings_);
    airFriction_->setObjectName(QStringLiteral("airFriction"));
    airFriction_->setRange(0, 5);
    airFriction_->setDecimals(2);
    airFriction_->setSingleStep(0.1);
    airFriction_->setToolTip(tr("Coulomb friction between bodies in contact through the air"));
    for (QWidget* w : std::initializer_list<QWidget*>{airIterations_, airInterval_, airThreshold_,
                                                      airDistance_, airFriction_}) {
        w->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed); // never widen the dock
    }
    airForm->addRow(tr("Iterations"), airIterations_);
    airForm->addRow(tr("Optimise"), airInterval_);
    airForm->addRow(tr("Below quality"), airThreshold_);
    airForm->addRow(tr("Contact distance"), airDistance_);
    airForm->addRow(tr("Friction"), airFriction_);
    airSettings_->setEnabled(false);
    form->addRow(airSettings_);
    for (QSpinBox* box : {airIterations_, airInterval_}) {
        connect(box, &QSpinBox::valueChanged, this, &SolverSettingsPanel::settingsEdited);
    }
    for (QDoubleSpinBox* box : {airThreshold_, airDistance_, airFriction_}) {
        connect(box, &QDoubleSpinBox::valueChanged, this, &SolverSettingsPanel::settingsEdited);
    }
    status_ = new QLabel(panel);
    status_->setObjectName(QStringLiteral("simulationStatus"));
    form->addRow(status_);
    // Edits reach the solver between steps.
    for (QSpinBox* box : {substeps_, iterations_}) {
        connect(box, &QSpinBox::valueChanged, this, &SolverSettingsPanel::settingsEdited);
    }
    // The threads belong to the machine, not the scene: not an edit of the document.
    connect(threads_, &QSpinBox::valueChanged, this, &SolverSettingsPanel::threadsChanged);
    connect(timeStep_, &QDoubleSpinBox::valueChanged, this, &SolverSettingsPanel::settingsEdited);
    connect(exactAngularMomentum_, &QCheckBox::toggled, this, &SolverSettingsPanel::settingsEdited);
    connect(continuousCollision_, &QCheckBox::toggled, this, &SolverSettingsPanel::settingsEdited);
    // Before any scene: the defaults a new scene gets, not the boxes' minimums (it read 0.010 ms
    // and 1 iteration).
    showSettings(SolverSettings{}, false, false);
}

SolverSettings SolverSettingsPanel::settings(const SolverSettings& scene) const {
    SolverSettings s = scene;
    // A box shows its value rounded to its decimals: the scene's own value stands until the
    // box shows another one (so editing one value does not round the others).
    auto take = [](const QDoubleSpinBox* box, Real& value, Real unit) {
        if (std::abs(box->value() - value / unit) > 0.5 * std::pow(10.0, -box->decimals())) {
            value = box->value() * unit;
        }
    };
    take(timeStep_, s.timeStep, 1e-3);
    s.substeps = substeps_->value();
    s.iterations = iterations_->value();
    s.exactAngularMomentum = exactAngularMomentum_->isChecked();
    s.continuousCollision = continuousCollision_->isChecked();
    s.airIterations = airIterations_->value();
    s.airOptimizationInterval = airInterval_->value();
    take(airThreshold_, s.airQualityThreshold, 1);
    take(airDistance_, s.airContactDistance, 1e-3);
    take(airFriction_, s.airFriction, 1);
    RigidSettings& r = s.rigid;
    r.iterations = rigidIterations_->value();
    r.substeps = rigidSubsteps_->value();
    take(rigidContactHertz_, r.contactHertz, 1);
    r.warmStart = rigidWarmStart_->isChecked();
    r.separatePush = rigidSeparatePush_->isChecked();
    r.stabilisation = StackStabilisation(rigidStabilisation_->currentData().toInt());
    r.sleeping = rigidSleeping_->isChecked();
    r.aggressiveSleep = rigidAggressiveSleep_->isChecked();
    return s;
}

void SolverSettingsPanel::showSettings(const SolverSettings& settings, bool hasRigidBodies,
                                       bool hasAir) {
    for (QWidget* w : std::initializer_list<QWidget*>{
             timeStep_, substeps_, iterations_, exactAngularMomentum_, continuousCollision_}) {
        w->blockSignals(true);
    }
    timeStep_->setValue(settings.timeStep * 1000.0);
    substeps_->setValue(settings.substeps);
    iterations_->setValue(settings.iterations);
    exactAngularMomentum_->setChecked(settings.exactAngularMomentum);
    continuousCollision_->setChecked(settings.continuousCollision);
    for (QWidget* w : std::initializer_list<QWidget*>{
             timeStep_, substeps_, iterations_, exactAngularMomentum_, continuousCollision_}) {
        w->blockSignals(false);
    }
    for (QWidget* w : std::initializer_list<QWidget*>{airIterations_, airInterval_, airThreshold_,
                                                      airDistance_, airFriction_}) {
        w->blockSignals(true);
    }
    airIterations_->setValue(settings.airIterations);
    airInterval_->setValue(settings.airOptimizationInterval);
    airThreshold_->setValue(settings.airQualityThreshold);
    airDistance_->setValue(settings.airContactDistance * 1000.0);
    airFriction_->setValue(settings.airFriction);
    for (QWidget* w : std::initializer_list<QWidget*>{airIterations_, airInterval_, airThreshold_,
                                                      airDistance_, airFriction_}) {
        w->blockSignals(false);
    }
    airSettings_->setEnabled(hasAir);
    const std::initializer_list<QWidget*> rigidWidgets{
        rigidIterations_,   rigidSubsteps_,      rigidContactHertz_, rigidWarmStart_,
        rigidSeparatePush_, rigidStabilisation_, rigidSleeping_,     rigidAggressiveSleep_};
    for (QWidget* w : rigidWidgets) {
        w->blockSignals(true);
    }
    const RigidSettings& rigid = settings.rigid;
    rigidIterations_->setValue(rigid.iterations);
    rigidSubsteps_->setValue(rigid.substeps);
    rigidContactHertz_->setValue(rigid.contactHertz);
    rigidWarmStart_->setChecked(rigid.warmStart);
    rigidSeparatePush_->setChecked(rigid.separatePush);
    rigidStabilisation_->setCurrentIndex(rigidStabilisation_->findData(int(rigid.stabilisation)));
    rigidSleeping_->setChecked(rigid.sleeping);
    rigidAggressiveSleep_->setChecked(rigid.aggressiveSleep);
    for (QWidget* w : rigidWidgets) {
        w->blockSignals(false);
    }
    rigidSettings_->setEnabled(hasRigidBodies);
}

int SolverSettingsPanel::threads() const {
    return threads_->value();
}

void SolverSettingsPanel::setStatus(const QString& text) {
    status_->setText(text);
}

} // namespace pbd

// lens-tuner (docs/tuner.md).
#ifndef LENS_TUNER_SERVICE_H_
#define LENS_TUNER_SERVICE_H_
#endif  // LENS_TUNER_SERVICE_H_

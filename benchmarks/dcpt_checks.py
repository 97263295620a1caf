"""Benchmark: do the restorers' no-reference checks (``iclr25._guard``) agree with the
reference? Issue 68.

The check (``dcpt.restore``, ``lowlight.enhance``) scores an output beside its input and the
classical result, and warns (and, by default, returns the input) where ours scores below.
Here each check's verdicts are compared with the clean photo's: PSNR against it says
whether an output is worse than its input (and than the classical result). Photos the
project's testbeds and NIQE's pristine model do not use: scikit-learn's ``china`` and
``flower``, matplotlib's ``grace_hopper`` (colour), scikit-image's ``moon``, ``cell`` and
``page`` (grey, as three equal channels); each resized to ``--side`` px (longer side) and
centre-cropped to a 4:3 window.

* blur (Gaussian σ 1.5, 2, 2.5) and defocus (disk radius 2, 3, 4): the classical result is
  Richardson-Lucy with the library's kernel (σ 2, radius 3); the outputs judged are
  Richardson-Lucy with the family's other widths (under- and over-deconvolution), unsharp
  masking, a good restoration with its tone shifted (× 0.8 + 0.1) and the input blurred
  further (σ 1). Measures: today's (re-blur by a kernel whose width is estimated from the
  photo) and the old one (re-blur by the classical restorer's kernel).
* low light (``degrade(..., "low_light")``, 2 draws per photo): the classical result is the
  best of gamma / CLAHE / gamma + NL-means by the measure; the outputs judged are those
  three, the gamma curve to means 0.15 and 0.85, tinted (× (1.1, 1, 0.9)), with added noise
  (σ 0.1), flattened (0.4 · x + 0.3) and the low-light network trained briefly on the dark
  photos (``ZeroReferenceEnhancer``, ``--steps``). Measures: today's, last session's
  (exposure against mid-grey, colour cast, noise) and the old one (NIQE). Colour: on the
  grey photos, whether an output is tinted
  (channel means apart by more than one 8-bit level, 1/255, against the clean photo) and
  whether the check's cast term says so.

* low light, fresh set (issue 68, round 2; written down here before the measure was run on
  it, so that its agreement is not a figure the measure was fitted to): the photos of
  :func:`fresh_photos` (3 colour, 4 grey; none used by a testbed, a test, NIQE's pristine
  model or the set above), each darkened by the three :data:`FRESH_DARK` settings (outside
  the library's default ranges); the outputs of :func:`fresh_outputs` (over-exposed gamma
  curves and clipped linear gains among them) and the network. Measures: today's, last
  session's (exposure against mid-grey, colour cast, noise) and NIQE.

* round 3 (issue 68; ``--set new``, written down and committed before the default's margin,
  ``iclr25._guard.MARGINS``, was run on it): the photos of :func:`new_photos` (none used
  above, by a testbed, a test or NIQE's pristine model: scikit-image's ``hubble_deep_field``
  and ``retina``, other crops of ``china``, ``flower`` and ``grace_hopper``, grey ``text``
  and ``shepp_logan_phantom``), with degradations at levels used nowhere before
  (:data:`NEW_NOISE`, :data:`NEW_BLUR`, :data:`NEW_DARK`) and outputs of
  :func:`new_noise_outputs`, :func:`new_blur_outputs`, :func:`new_lowlight_outputs`
  (classical restorers at other settings, spanning better and worse than the input; the
  low-light network trained briefly; DCPT's network is not trained here: the check sees
  only its output, and these span the same range). Reported per kind: the confusion at
  margin 0 (the check's verdict: below the input) and at the default margin (what the
  default does: ours returned only where it beats the input by the margin), and how many
  outputs the default returns that are worse than the input by the reference.

* round 4 (``--set round4``, committed before it ran): the two fixes round 3 showed the
  recorrupted (noise) estimate needs, on :func:`round4_photos` (other crops, two images
  used nowhere) at :data:`ROUND4_NOISE` with :func:`round4_noise_outputs`.

* round 5 (``--set round5``, committed before it ran): the two fixes round 3 showed the
  re-blur measure needs (a width estimate that reads low on thin strokes and points; a
  disk below 1 px that is the identity), on :func:`round5_photos` (images and crops used
  by no earlier set) at :data:`ROUND5_BLUR` with :func:`new_blur_outputs`.
  ``--set new-blur``: round 3's blur and defocus cases alone (no longer held out).

* round 6, blur (``--set round6``, committed before it ran; h68blur2): the blur width read from
  the image's steps where it has enough of them (``iclr25._guard.blur_sigma``), chosen on
  rounds 3 and 5, on :func:`round6_blur_photos` (images and crops used nowhere before) at
  :data:`ROUND6_BLUR` with :func:`new_blur_outputs`.

* round 6, low light (``--set round6``, committed before it ran): low light's rule for photos that
  are not under-exposed typical ones (``iclr25._guard.not_underexposed``: highlights at
  middle grey, or a low-key scene; the default keeps the input) on :func:`round6_dark_photos`
  (other crops, ``immunohistochemistry``, generated night sky, night street, blobs on
  black and a daylight scene) at :data:`ROUND6_DARK` with :func:`round6_lowlight_outputs`,
  by the rule before round 6 and today's.

* round 7, defocus (``--set round7-defocus``, committed after the rule and before it ran;
  h68defocus): the posterior PSNR (``iclr25._guard.posterior_psnr``: the disk's radius by
  maximum likelihood, the PSNR against the Wiener posterior of the sharp image), chosen on
  rounds 3, 5 and 6, on :func:`round7_defocus_photos` (``hubble_deep_field``'s bottom-left
  quarter, ``lfw_subset``'s faces 12-23, five generated scenes) at :data:`ROUND7_DEFOCUS`
  (disk radius 1.3, 2.4, 3.6) with :func:`new_blur_outputs`, by the library imported (run
  once on this branch, once with main's ``iclr25`` on the path).
  Since h68defocus the blur sets score each family by the measure the library picks
  (``choose_measure``: defocus by the posterior PSNR, default margin 0).
* round 7, low light (``--set round7-lowlight``, committed before it ran, e64765e on branch
  h68ll7): a candidate exposure measure against a scene-specific ideal (Reinhard's key value
  for the log-average, the brightest block at white, in place of round 6's no-verdict rule;
  not merged: it returned 3 outputs worse where the library's rule returns none) on
  :func:`round7_lowlight_photos` (12 images and crops used nowhere before: 8 typical, 2 dark
  and 2 bright by design) at :data:`ROUND7_DARK` with :func:`round7_lowlight_outputs`, by the
  measure of the ``iclr25`` imported (the library's: round 6's rule); also
  ``fallback="classical"``'s switches on the network's outputs (:func:`fallback_report`).

* round 8, low light (``--set round8-lowlight``, run with ``--quick --side 192``; committed
  after the rule and before it ran; h68ll8): the noise-floor rule (``not_underexposed``: no
  verdict where the median luma is at or under 3 σ of the noise, the limit of detection)
  on :func:`round8_lowlight_photos` (12 images and crops used nowhere before: 8 typical, 2
  near-black crops of ``retina``, a dim generated dusk, a generated fog) at
  :data:`ROUND8_DARK` with :func:`round7_lowlight_outputs` and the network, by the rule of
  the ``iclr25`` imported (run once on the branch, once with main's).

* round 9, low light (``--set round9-lowlight``, run with ``--quick --side 256``; committed
  after the rule and before it ran; h68ll9): the rule's two fixes for realistic dark
  photos (``iclr25._guard.low_key``: low-key needs the log-average below middle grey with
  the highlights at white as well as a negative key; ``blank_sigma``: the noise floor's
  σ is black's, not the frame's) on :func:`round9_lowlight_photos` (11 images and crops
  used nowhere before: 8 typical, 3 dark by design) darkened by :data:`ROUND9_DARK`
  (:func:`round9_darken`: a camera's under-exposure in linear light with shot and read
  noise, walk 5's kind on the encoded values, a steep curve; all written to 8 bits), with
  round 7's outputs and the network, by the rule of the ``iclr25`` imported (run once on
  the branch, once with main's), per kind (:func:`kind_report`).

* motion blur (issue 68, h68motion; the rule in the comment above :data:`MOTION_M1`,
  committed before any candidate ran): the posterior PSNR under the likeliest line kernel
  and the re-blur by it (``iclr25._guard.MEASURES["motion"]``), margins swept on rounds 3,
  5 and 11's photos blurred by line and shaken kernels (``--set motion-dev``, ``--quick
  --side 128``), the pick then run once on a held-out round 12 (``--set round12-motion``).
  Development (1,650 cases): the pick, posterior 0.25 dB AND re-blur 2 dB, 1144 / 378 / 0
  / 128, 77.1%, none returned worse (main, NIQE keeping the input: 69.3%). Round 12
  (measured once, 450 cases, load 1.6): the pick 282 / 147 / 1 / 20, 67.1%, 1 returned
  worse (Wiener 0.05 on the plaid, 20.43 vs 20.48 dB), 12.0% of the better outputs
  returned; main 62.9%, none: the merge condition failed, no default changed.

* round 9, blur and defocus (``--set round9-blur``, committed after the rule and before it
  ran; h68post9): a candidate rule (the defocus prior's exponent read with the radius, and
  ours kept only where it beats the input under the likeliest model and each of its grid
  neighbours), chosen on rounds 3, 5, 6 and 7; **not merged** (on round 9 its agreement was
  below the library's and it cost 4x; branch h68post9), on
  :func:`round9_blur_photos` (the bottom thirds of ``china``, ``flower`` and
  ``grace_hopper``, ``lfw_subset``'s faces 36-47 and patches 136-147, generated stained
  glass, fabric and a fingerprint) at :data:`ROUND9_BLUR` (Gaussian σ 0.9, 1.9, 2.6; disk
  radius 1.7, 2.9, 3.8) with :func:`new_blur_outputs`, by the library imported (run once on
  the branch, once with main's ``iclr25`` on the path). Since h68post9 the unsharp outputs
  are real: with ``channel_axis=-1`` scikit-image 0.26's ``unsharp_mask`` filtered three
  rows and left the rest of its output uninitialised, so every earlier round's "unsharp"
  outputs were garbage that changed from run to run (the figures below were measured with
  them).

* the defaults (``--set defaults-sweep``, h68dm10; the rule committed before the sweep ran):
  issue 68 asks that the defaults never return an output worse than the input. Rounds 3,
  5, 6, 7 and 9 are all development sets now. Each blur and defocus case of theirs
  (:func:`sweep_cases`, the outputs of :func:`new_blur_outputs`) is scored once, and the
  default is chosen per kind over a grid written here before any of it was looked at:
  defocus (the posterior PSNR) over :data:`SWEEP_SDS` × :data:`SWEEP_DEFOCUS_MARGINS`, blur
  (the re-blur PSNR) over :data:`SWEEP_BLUR_MARGINS`. **Rule**: pooled over the kind's
  development cases (defocus: rounds 3, 5, 6, 7, 9; blur: rounds 3, 5, 6, 9), the fewest
  outputs returned worse than the input (quiet & worse: kept by the default, below the
  input by the reference); among those, the highest pooled agreement; then the nearest to
  main's default (defocus 2 SDs, margin 0; blur 1 dB), then the smaller margin. The whole
  table (per set) is printed and goes into ``iclr25._guard``'s docstring.

* round 10, blur and defocus (``--set round10-blur``, declared and committed after the
  defaults were chosen and committed, before they ran on it; h68dm10): the defaults (blur:
  re-blur margin 5 dB; defocus: posterior margin 1.5 dB at 0 SDs) on
  :func:`round10_photos` (zoomed windows of ``china``, ``flower`` and ``grace_hopper``,
  ``lfw_subset``'s faces 48-59 and patches 148-159, ``binary_blobs``, generated foliage,
  a skyline and a halftone) at :data:`ROUND10_BLUR` (Gaussian σ 1.25, 2.1, 3.4; disk
  radius 1.55, 2.3, 4.4) with :func:`new_blur_outputs`, by the library imported (run
  once on the branch, once with main's ``iclr25`` on the path).

* candidates for blur and defocus (``--set blur11-sweep``, h68blur11; the candidates,
  their grid and the rule committed before the sweep ran): on :func:`dev_sets`, each
  case scored by the posterior PSNR with the kind's kernel (Gaussian or disk, width by
  maximum likelihood), by it at its worst over the width's 95% likelihood set, and by it
  AND a re-blur PSNR (:data:`BLUR11_SDS` and the grids beside it, :func:`blur11_kept`);
  h68dm10's rule picks among them (:func:`blur11_table`), and the pick becomes the
  default only where it returns no more worse outputs than main's and agrees more often.

* round 11, blur and defocus (``--set round11-blur``, declared and committed after
  h68blur11's default was committed, before it ran on it): :func:`round11_photos` (zoomed
  windows of ``china``, ``flower`` and ``grace_hopper`` at new places, ``lfw_subset``'s
  faces 60-71 and patches 160-171, generated clouds, circuit board and tiles) at
  :data:`ROUND11_BLUR` (Gaussian σ 1.05, 1.75, 2.95; disk radius 1.65, 2.65, 3.3) with
  :func:`new_blur_outputs`, by the library imported (once on the branch, once with
  main's); a second score (``MeasureSpec.also``) that ours does not clear keeps the
  input, as ``guarded`` does.

* low-key candidates (``--set lowkey-candidates``, run with ``--quick``; h68ll12, no
  held-out set spent): rules for ``low_key`` that a darkening k·x^γ leaves
  (:func:`lowkey_candidates`, functions of the log-luma distribution's shape) in place of
  the library's inside ``not_underexposed``, on the low-light development sets
  (:func:`lowlight_dev_cases`), at the default margin; every one that frees walk 7's
  darkened ``immunohistochemistry`` returns more outputs worse than main's rule, so none
  was merged (``iclr25._guard``'s docstring).

* low light's margin (``--set lowlight-margins``, run with ``--quick``; h68ll13; this rule,
  its grid and round 13 below were written down and committed before the sweep ran):
  ``iclr25._guard.MARGINS["exposure"]`` (1 dB since round 3, declared, never swept) over
  :data:`LOWLIGHT_MARGINS` (0, 0.25, 0.5, 0.75, 1 dB) on every in-repo low-light
  development set (:func:`lowlight_dev_cases`: the first set, ``lowlight-fresh``, rounds 3,
  6, 7, 8 and 9; walks 4, 5 and 7 live in their own files, not in this tool, and are left
  out), each case scored once (the margin is a threshold on the recorded scores), with
  the library's no-verdict rule (``not_underexposed``: such an input is kept at every
  margin). **Rule**: pooled over the development sets, the fewest outputs returned worse
  than the input (quiet & worse); among those, the highest pooled agreement; a tie to
  the larger margin. The table (each set and pooled: warned & worse, warned & better,
  quiet & worse, quiet & better, agreement, returned worse) and the pick go into this
  docstring. **Merge condition**: on the new held-out round 13 (below), measured once, the
  pick returns no output worse than its input (as main's 1 dB returned none on round 9)
  and agrees with the reference more often than main's 1 dB on the same cases; only then
  does ``MARGINS["exposure"]`` change; otherwise no default changes (the set, the rule and
  the tables stay).

  The sweep (load 2.7-3.6; 2,094 cases; warned & worse / warned & better / quiet & worse
  / quiet & better, agreement, returned worse):

  ======  =====================  =====  =====  ==========================================
  margin  pooled                 agree  worse  per set: agreement (returned worse)
  ======  =====================  =====  =====  ==========================================
  0       554 / 587 / 10 / 943   71.5%  10     first 58.3% (3), fresh 42.5% (0), round 3
                                               71.0% (7), round 6 61.0% (0), round 7 80.6%
                                               (0), round 8 74.8% (0), round 9 87.4% (0)
  0.25    554 / 587 / 10 / 943   71.5%  10     as at 0
  0.5     555 / 588 / 9 / 942    71.5%  9      first 59.3% (2), fresh 42.1% (0), rounds
                                               3-9 as at 0
  0.75    555 / 592 / 9 / 938    71.3%  9      first 59.3% (2), fresh 41.7%, round 7
                                               80.3%, round 8 74.3%; others as at 0.5
  1       555 / 594 / 9 / 936    71.2%  9      first 58.3% (2), fresh 41.7% (0), round 3
                                               71.0% (7), round 6 61.0% (0), round 7 80.3%
                                               (0), round 8 74.1% (0), round 9 87.4% (0)
  ======  =====================  =====  =====  ==========================================

  **The rule picks 0.5 dB** (9 returned worse, tied with 0.75 and 1 dB; the highest
  agreement of the three, 71.5% against 71.3% and 71.2%). The margin moves few verdicts:
  6 of 2,094 between 0.5 and 1 dB (the first set's, ``lowlight-fresh``'s, round 7's and
  round 8's); round 9's 50 warned-and-better cases are the same at every margin from 0 to
  1 dB (its input kept by the no-verdict rule or its output scored below the input, not
  within the margin above it), and round 3's 7 returned worse (the dim flower crop)
  clear every margin. Walks 4, 5 and 7 from their files (outside the rule, after the
  pick; /work/runs scratch, round 7's outputs and each walk's network): the same verdicts
  at every margin, 23 / 49 / 9 / 123 of 204, 71.6%, 9 returned worse (walk 7's rocket).

  Round 13 (``--set round13-lowlight``, declared in 7d2dcb1 before the sweep ran;
  measured once after the pick was committed, fbced17; load 3.5-3.9; 396 cases): **0.5
  dB and main's 1 dB give the same verdicts**, 129 / 102 / 0 / 165, agreement 74.2%,
  none returned worse (typical 27 / 96 / 0 / 165, 66.7%; dark 102 / 6 / 0 / 0, 94.4%; the
  network's output returned for 0 of 24 typical cases, as in round 9); tints on grey
  photos 12 of 12 seen, no false alarm in 60; ``fallback="classical"`` switched 33 of the
  network's 33 outputs, none to a worse result. The pick does not agree more often than
  1 dB, so the merge condition fails and no default changed. At least 81 of the 96
  typical false alarms are inputs the no-verdict rule keeps: the flag window and the
  orchard read low-key even clean (keys −0.25 and −0.19: dark navy and green fields
  under their highlights, as round 6's navy uniform) and the patches montage (clean key
  +0.37) reads −0.01 to −0.14 darkened.

* round 13, low light (``--set round13-lowlight``, run with ``--quick --side 256``;
  declared and committed with the rule above, before the sweep ran; h68ll13): on
  :func:`round13_lowlight_photos` (11 images and crops used nowhere before: 8 typical, 3
  dark by design, as round 9) darkened by :data:`ROUND13_DARK` (:func:`round9_darken`'s
  kind, new parameters), with round 7's outputs (:func:`round7_lowlight_outputs`) and the
  network, each case scored once and judged at main's 1 dB and at the sweep's pick
  (:data:`LOWLIGHT_MARGIN_PICK`), per kind (:func:`kind_report`).

* low-key with a spatial condition (``--set lowkey-spatial``, run with ``--quick``; h68ll14;
  the candidates, the rule and the merge condition written down and committed before any
  candidate was measured): round 13's false alarms are mostly inputs the no-verdict rule
  keeps as low-key (a navy flag window and an orchard read low-key even clean), and no
  rule on the luma histogram's shape separates such typical scenes from night skies
  (h68ll12). What such rules do not read is WHERE the light sits. Candidates for
  ``iclr25._guard.low_key`` (inside ``not_underexposed``), each main's rule AND a
  condition that is a function of the input image only (:func:`lowkey_spatial_candidates`;
  constants from definitions, none fitted):

  * main's rule (a candidate; ties go to it);
  * **near-black area**: at least half of the frame's 4-px blocks at or under Zone I
    relative to its own highlights (:func:`near_black_fraction`: block luma <=
    :data:`NEAR_BLACK` 0.108 × the 99th percentile; Zone I is four stops under middle
    grey's 18%, 0.18/16 of white in linear light, written in sRGB as ``MIDDLE_GREY`` is);
    invariant to a gain, not to a power curve (γ > 1 pushes more area under: towards
    keeping the input);
  * **highlights on the dark half**: more than half of the 8 neighbours of the highlights
    (the brightest 1% of blocks, the module's highlights) lie below middle grey with that
    highlight at white (:func:`highlight_isolation`; a lit blob on a dark field vs a
    highlight among tones near its own); invariant to a gain, not to a power curve (γ > 1
    stretches the log differences: towards keeping the input);
  * **either**: main's rule AND (near-black area OR highlights on the dark half).

  **Rule**: on every in-repo low-light development set (:func:`lowkey_spatial_dev_cases`:
  the first set, ``lowlight-fresh``, rounds 3, 6, 7, 8, 9 and 13; walks 4, 5 and 7 live in
  their own files under /work/runs, which this tool does not gather, so they are not in
  the rule), at the default margin (``MARGINS["exposure"]``, 1 dB), pooled: the fewest
  outputs returned worse than the input (quiet & worse); among those the highest
  agreement; a tie goes to main's rule. The table (each candidate, each set and pooled:
  warned & worse / warned & better / quiet & worse / quiet & better, agreement, returned
  worse) and the pick go into this docstring. **Merge condition**: on the new held-out
  round 14 (``--set round14-lowlight``, declared after this and before the table ran),
  measured once, the pick returns no output worse than its input (main: 0 on round 13)
  and agrees with the reference more often than main's rule on the same cases; and on the
  walks' files (4, 5, 7; measured by a scratch script, outside the rule) it returns no
  more outputs worse than main's. Only then does ``low_key`` change; otherwise no default
  changes (the set, the rule and the tables stay).

  The table (``--quick``, load 1.7-2.5, 2,490 cases, CPU 69 s; warned & worse / warned &
  better / quiet & worse / quiet & better, agreement, returned worse):

  ==================  =======================  =====  =====  ===============================
  candidate           pooled                   agree  worse  per set: agreement (worse)
  ==================  =======================  =====  =====  ===============================
  main                684 / 696 / 9 / 1101     71.7%  9      first 58.3% (2), fresh 41.7%
                                                             (0), round 3 71.0% (7), round 6
                                                             61.0% (0), round 7 80.3% (0),
                                                             round 8 74.1% (0), round 9
                                                             87.4% (0), round 13 74.2% (0)
  near-black area     669 / 563 / 24 / 1234    76.4%  24     first 58.3% (2), fresh 46.0%
                                                             (5), round 3 71.9% (15), round
                                                             6 64.8% (0), round 7 88.0% (0),
                                                             round 8 76.6% (0), round 9
                                                             94.7% (2), round 13 79.8% (0)
  highlights on the   677 / 553 / 16 / 1244    77.1%  16     first 58.3% (2), fresh 46.0%
  dark half                                                  (5), round 3 75.2% (7), round 6
                                                             64.8% (0), round 7 88.0% (0),
                                                             round 8 79.2% (0), round 9
                                                             94.7% (2), round 13 79.8% (0)
  either              677 / 564 / 16 / 1233    76.7%  16     as "highlights on the dark
                                                             half" but round 8 76.6% (0)
  ==================  =======================  =====  =====  ===============================

  **The rule picks main's rule** (9 returned worse against 16 and 24). Each spatial
  condition frees typical scenes (agreement +4.7 to +5.4 points pooled; round 13 74.2% →
  79.8%, round 9 87.4% → 94.7%, round 7 80.3% → 88.0%) but also inputs whose brightenings
  are worse than the input by the reference: 5 in ``lowlight-fresh``, 2 in round 9, and
  with the near-black area 8 more in round 3. Since the pick is main's rule, round 14
  cannot agree more often than main's, so the merge condition cannot hold: no default
  changes.

* round 14, low light (``--set round14-lowlight``, run with ``--quick --side 256``;
  declared and committed after ``--set lowkey-spatial``'s candidates and rule and before
  its table ran; h68ll14): on :func:`round14_lowlight_photos` (11 images and crops used
  nowhere before: 8 typical, three of them generated dark-toned scenes (a navy room, a
  forest, a dusk interior) and a navy uniform window; 3 dark by design: a night sky,
  objects on black, a lit window at night) darkened by :data:`ROUND14_DARK`
  (:func:`round9_darken`'s kind, new parameters), with round 7's outputs
  (:func:`round7_lowlight_outputs`) and the network, each case scored once and judged with
  main's ``low_key`` and with the candidates' pick (:data:`LOWKEY_SPATIAL_PICK`), per kind
  (:func:`kind_report`); measured once.

  Round 14 (measured once after the pick was committed, bc03391; load 2.7-2.9; 396 cases,
  CPU 20 s): main's rule (the pick) 141 / 167 / 0 / 88, **agreement 57.8%, none returned
  worse** (typical 39 / 161 / 0 / 88, 44.1%; dark 102 / 6 / 0 / 0, 94.4%; the network's
  output returned for 0 of 24 typical cases); tints on grey photos 12 of 12 seen, no false
  alarm in 60; ``fallback="classical"`` switched 33 of the network's 33 outputs, none to a
  worse result. The merge condition fails (the pick is main's rule): no default changed.
  Five of the eight typical photos read low-key at every darkening (the flower's edge on
  dark bokeh, keys −0.15 to −0.26; the navy uniform, −0.04 to −0.10; the navy room,
  −0.31 to −0.38; the forest, −0.15 to −0.18; the dusk interior, −0.08 to −0.12), one
  patches input sits under the noise floor: the dark-toned typical scenes the round was
  built to hold are exactly the ones main's rule keeps.

  Outside the rule (a scratch script, after round 14's table was committed; no decision
  rests on it): the spatial candidates' extra returned-worse cases on the development sets
  are dim inputs that read typical by layout as well (``lowlight-fresh``'s clock, keys
  −0.01, and MRI, −0.06; round 9's patches montage, −0.15; with the area rule round 3's
  phantom, its near-black area 0.42); on round 14 each candidate would have agreed more
  (66.9-69.7%) but returned 4 worse (main 0), and on walks 4, 5 and 7's files 87.3%
  against 71.6% but 11 worse against 9 (walk 4 0 → 2): the merge condition would have
  failed for every one. Round 14's generated night sky (single-pixel stars, a moon) read
  neither near-black (0.00) nor blob-on-dark (0.30-0.35) at 4-px blocks.

* low light's exposure across plausible keys (``--set lowlight-key-range``, run with
  ``--quick``; h68ll15; the candidates, the rule and the merge condition written down and
  committed before any candidate was measured): walk 10 found an output returned worse than
  its input on a dark-toned scene that is not low-key (a cell crop, reference mean 0.25,
  key +0.54): the exposure measure scores tones against typical photos' (mean 0.456), so
  it read the input at 6.29 dB (12.82 by the reference) and passed an over-brightened
  output (13.11; 9.89 by the reference). No measure without a reference knows a scene's
  true key; the question is what the default does when the plausible keys disagree. Each
  candidate is a function of the input and the output only (:func:`key_range_candidates`);
  its gain is ours' score minus the input's, in dB, and ours is returned where the gain
  reaches the default margin (``MARGINS["exposure"]``, 1 dB) and ``not_underexposed``
  gives a reason for none (unchanged). Constants are the definitions' (the
  :data:`iclr25._guard.PRISTINE` photos' own statistics), none fitted:

  * main's rule (a candidate; ties go to it): the gain by ``lowlight_psnr``, the tones
    against :func:`iclr25._guard.natural_tones` (the PRISTINE photos pooled);
  * **(a) pristine tones, worst case**: the same PSNR (tone error, colour cast, noise)
    against each PRISTINE photo's own luma distribution and the pooled one (8 ideals);
    the gain is the least over them (ours must beat the input under every member);
  * **(a') the pooled tones at the PRISTINE keys, worst case**: the pooled tones put by a
    power curve ``t^γ`` at each PRISTINE photo's log-average luma (Reinhard's key value,
    ``exp mean log max(L, 1/255)``, 1/255 the least level 8 bits encode above black:
    0.227 (astronaut) to 0.464 (gravel); ``γ_j = log L̄_j / log L̄_pooled``, since a power
    curve raises a log-average to its power; the 256 quantiles' log-average then reads
    0.239 to 0.455) and the pooled tones themselves (8 ideals); the gain is the least over
    them;
  * **(c) bounded brightening**: main's gain where ours' log-average luma lies within the
    PRISTINE photos' (0.227 to 0.464), ``-inf`` (the input kept) where it lies outside.

  **Rule**: pooled over every in-repo low-light development set
  (:func:`key_range_dev_cases`: the first set, ``lowlight-fresh``, rounds 3, 6, 7, 8, 9,
  13 and 14, and walk 10's 8 + 3 images darkened its way (:func:`walk10_photos`,
  :func:`walk10_darken`: exposure 0.12, cast 0.6 / 0.85 / 1, γ 1.1, Poisson 400 e-, read σ
  0.003, its seeds; equal to the walk's files to 3e-8) with round 7's outputs and the
  tool's network), at the default margin:
  the fewest outputs returned worse than the input (quiet & worse); among those the
  highest agreement; ties go to main's rule. The table (each candidate, pooled and per
  set: warned & worse / warned & better / quiet & worse / quiet & better, agreement,
  returned worse) and the pick go into this docstring. **Merge condition**: on the new
  held-out round 15 (``--set round15-lowlight``, declared after this and before the table
  runs), measured once, the pick returns no more outputs worse than main's rule, none
  worse on its dark-toned subset, and agrees with the reference at least as often as
  main's rule minus 2 points; only then does the default (``iclr25._guard``'s exposure
  measure) change; otherwise no default changes (the sets, the rule and the tables stay).

  The table (``--quick``, load 3.1-4.7, 3,018 cases, CPU 191 s; warned & worse / warned
  & better / quiet & worse / quiet & better, agreement, returned worse; main's rows equal
  the earlier tables' on every set they share):

  =================  =======================  =====  =====  ================================
  candidate          pooled                   agree  worse  per set: agreement (worse)
  =================  =======================  =====  =====  ================================
  main               833 / 866 / 23 / 1296    70.5%  23     first 58.3% (2), fresh 41.7%
                                                            (0), round 3 71.0% (7), round 6
                                                            61.0% (0), round 7 80.3% (0),
                                                            round 8 74.1% (0), round 9
                                                            87.4% (0), round 13 74.2% (0),
                                                            round 14 57.8% (0), walk 10
                                                            87.1% (14)
  (a) pristine       834 / 953 / 22 / 1209    67.7%  22     first 56.5% (1), fresh 37.7%,
  tones, worst                                              round 3 66.2% (7), round 6
                                                            61.0%, round 7 74.5%, round 8
                                                            71.3%, round 9 84.3%, round 13
                                                            72.2%, round 14 56.3%, walk 10
                                                            86.4% (14)
  (a') pooled tones  840 / 1027 / 16 / 1135   65.4%  16     first 57.4% (0), fresh 32.9%,
  at the pristine                                           round 3 64.3% (7), round 6
  keys, worst                                               61.0%, round 7 71.5%, round 8
                                                            67.6%, round 9 81.6%, round 13
                                                            70.2%, round 14 55.8%, walk 10
                                                            84.1% (9)
  (c) bounded        849 / 1394 / 7 / 768     53.6%  7      first 33.3% (0), fresh 27.4%,
  brightening                                               round 3 46.7% (6), round 6
                                                            50.4%, round 7 57.6%, round 8
                                                            56.7%, round 9 68.9%, round 13
                                                            59.1%, round 14 51.0%, walk 10
                                                            59.1% (1)
  =================  =======================  =====  =====  ================================

  (Sets without a count returned none worse.) **The rule picks (c) bounded brightening**
  (7 returned worse against 16, 22 and 23). Every candidate keeps a subset of main's
  returns (main's ideal is among (a)'s and (a')'s members; (c) is main's gain or the
  input), so none can return more outputs worse than main; each costs agreement, (c) 16.9
  points (the input kept for 528 more better outputs: their log-average lies outside the
  PRISTINE photos' 0.227-0.464). Main's 23: round 3's dim flower crop (7, every brightening), the
  first set's ``grace_hopper`` gamma to 0.85 (2) and walk 10's dark-toned crops (14: the
  cell crops at reference means 0.25-0.27 and ``microaneurysms``, brightened by CLAHE, the
  gamma curves and gains, and on ``cell_t`` by every output but the network). (c)'s 7:
  six of the dim flower crop's brightenings (within the range) and ``cell_a``'s CLAHE.
  The worst-case candidates still return 9-14 of walk 10's: even against their darkest
  member (the pooled tones at log-average 0.24) those brightenings beat a near-black
  input by 1.3-6.1 dB. The merge condition's bar for round 15: (c) returns no
  more worse than main by construction; it must return none worse on the dark-toned
  photos and agree within 2 points of main.

* round 15, low light (``--set round15-lowlight``, run with ``--quick --side 256``;
  declared and committed after ``--set lowlight-key-range``'s candidates and rule and
  before its table ran; h68ll15): on :func:`round15_lowlight_photos` (15 images and crops
  used nowhere before: 6 typical (reference mean luma 0.40-0.61), 7 dark-toned typical
  (0.16-0.30: windows of ``flower`` and ``grace_hopper`` in shade, generated
  fluorescence-like cells on a dim field, a library, a dusk garden, a slate roof, mossy
  stones), 2 dark by design (a candle, city lights on black)) darkened by
  :data:`ROUND15_DARK` (walk 10's kind with two new settings, round 9's kind with two),
  with round 7's outputs (:func:`round7_lowlight_outputs`) and the network; each case
  scored once and judged with main's rule and with the pick (:data:`KEY_RANGE_PICK`),
  per kind; measured once.

  Round 15 (measured once after the pick was committed, 7f05b0d; load 3.1 at its start;
  720 cases, CPU 53 s): main's rule 304 / 152 / 0 / 264, **agreement 78.9%, none returned worse**
  (typical 15 / 20 / 0 / 253, 93.1%; dark-toned 196 / 129 / 0 / 11, 61.6%; dark 93 / 3 /
  0 / 0, 96.9%); the pick, (c) bounded brightening, 304 / 252 / 0 / 164, **65.0%, none
  returned worse** (typical 15 / 117 / 0 / 156, 59.4%; dark-toned 196 / 132 / 0 / 8,
  60.7%; dark 96.9%). The merge condition fails on agreement (65.0% against main's 78.9%
  minus 2 points): no default changed. Main returned no output worse on the dark-toned
  photos because it judged few of them: every darkening of six of the seven (the
  shaded flower bokeh at three of four darkenings) reads low-key (keys −0.02 to −0.50),
  and the input is kept; the 129 better outputs not returned there are the false alarms
  rounds 13 and 14 found. Tints on grey photos (the montage, whose darkenings of walk
  10's kind carry a colour cast): 9 of 28 seen, no false alarm in 20 (the measure
  scores the cast against the input's balance, which such a darkening has already
  tinted); ``fallback="classical"`` switched 60 of the network's 60 outputs, none to a
  worse result; the network's output was returned for none of its 60 cases.

  Outside the rule (a scratch script, after round 15's table was committed; it reproduced
  main's and (c)'s counts; no decision rests on it): on round 15 (a) would have agreed
  77.4% (304 / 163 / 0 / 253; typical 89.2%), within the merge condition's 2 points, and
  (a') 75.8% (304 / 174 / 0 / 242), outside; none returned worse, and on the dark-toned
  photos every candidate gives main's verdicts but (c) (the low-key rule decides there).
  On the development sets (a) removes 1 of main's 23 returned worse, none of walk 10's 14.

* noise's margin from the estimate's own standard error (``--set r2r-se-sweep``, then
  ``--set round16-noise``; h68r2r; the candidates, the rule and the merge condition were
  committed before the sweep ran, in the comments above :data:`R2R_SE_CANDIDATES`): ours
  kept where the recorrupted estimate beats the input's by ``floor + z · SE`` (SE of the
  difference from the same draw over 16-px tiles; z 1.645 or 2, floor 0-0.5 dB) in place
  of the fixed 1 dB. Dev (rounds 3 and 4 at 96 and 160 px, 882 cases): the rule picks z 2,
  floor 0.5 dB, 92.9%, 6 returned worse (main's 1 dB 94.4%, 12). Held-out round 16 (12
  generated scenes, seeds 7901-7912, 160-320 px, σ 10/25/45, 13 outputs incl. two
  short-trained DCPT networks; 468 cases; run once): the pick 99 / 20 / 2 / 347, **95.3%,
  2 returned worse** (TV 0.08 at σ 10/255, 0.91 and 0.37 dB below the input, estimated
  1.08 and 1.66 dB above it, SE 0.25 and 0.44); main's 1 dB 97 / 53 / 4 / 314, 87.8%, 4.
  The condition (none returned worse) failed, so ``MARGINS["r2r"]`` stays 1 dB.

* noise's σ robust to texture (``--set sigma-sweep``, then ``--set round17-noise``; h68sigma;
  the candidates, the rule and the merge condition were committed before the sweep ran, in
  the comments above :data:`SIGMA_ESTIMATORS`): Chen et al.'s patch-covariance σ, Liu et
  al.'s weak-texture σ and Donoho on the flattest blocks, each at 1 dB and at h68r2r's SE
  pick, against main's Donoho σ at 1 dB. Dev (rounds 3, 4 and 16, 1,350 cases): the rule
  picks the weak-texture σ at 1 dB, 270 / 174 / 0 / 906, 87.1%, none returned worse (main
  254 / 90 / 16 / 990, 92.1%, 16). Held-out round 17 (12 generated scenes, 6 finely
  textured, seeds 7941-7952, 160-320 px, σ 5/15/30, 468 cases; run once): the pick 204 / 44
  / 0 / 220, **90.6%, none returned worse**; main 152 / 10 / 52 / 254, 86.8%, 52. The
  condition held: ``iclr25._guard.weak_texture_sigma`` is the check's σ. Cost at 300 × 400
  (``--set sigma-timing``, one thread, load 2.9): the check 1.11 s against 0.48 s.

* the SE margin on the weak-texture σ (``--set walk13-noise --walk13 DIR``, then ``--set
  round18-noise``; h68r2rse2; the candidate and the merge condition were committed before
  either ran, in the comments above :data:`SE2_CANDIDATE`): h68r2r's SE margin (0.5 dB + 2
  SE, not re-tuned) against main's 1 dB, both with the weak-texture σ. Development: walk
  13's 24 noise cases. Held-out round 18 (12 generated scenes, 6 finely textured, seeds
  8101-8112, 160-320 px, σ 8/20/40, near-ties, over-smoothing and a short-trained DCPT
  all-in-one network; run once): merge only where the candidate returns none worse and
  agrees at least as often as main. Walk 13: main 0 / 24 / 0 / 0, 0.0%; the candidate 0 /
  0 / 0 / 24, 100%. Round 18 (612 cases): the candidate 168 / 53 / 0 / 391, **91.3%, none
  returned worse**; main 168 / 77 / 0 / 367, 87.4%, none. The condition held: the SE margin
  is the default (``iclr25._guard.MARGINS["r2r"]`` 0.5 dB + ``R2R_SE_Z`` 2 SE).

* JPEG by the quantisation posterior (``--set jpeg-dev``, then ``--set jpeg-heldout``;
  h68jpeg; this rule, the sets and the candidates were written and committed before any
  candidate ran on data). Main judges ``degradation="jpeg"`` by NIQE, which judges no
  output against its input, so the default keeps the input always (walk 11: 4 of 6
  network outputs better by 0.50-0.80 dB withheld). The candidate measure
  (``iclr25._dequantise``): the clean image's 8×8 block-DCT luma coefficients lie in the
  bins the input's coefficients mark; the quantisation table is the best-fitting IJG
  (libjpeg/Pillow) luma table over qualities 1-100 and the 64 grid offsets, by the comb's
  likelihood (coefficients at multiples of the step plus decoding noise, against no
  comb); an input whose best comb is not at least 20 nats likelier than no comb (about
  log 6400 hypotheses + log 1e5) is unjudged (the default keeps it); a Laplacian prior per
  AC frequency fitted by maximum likelihood on the bins (DC: flat) gives each
  coefficient's posterior mean ``M`` and variance ``V``, and an output's expected squared
  luma error ``‖Z − M‖² + ΣV`` (orthonormal DCT, the complete blocks of the grid). Chroma
  is not read from the bins (4:2:0 and the decoder's upsampling blur its comb).
  Candidates (each judged: ours returned iff the input is judged and ours' score is at
  least the margin above the input's):

  - ``L``: the luma posterior PSNR, ``−10 log10(E‖z − X‖²/N + s·sd)``, ``sd`` the posterior
    standard deviation of ``(‖z − X‖² − ‖y − X‖²)/N`` (as ``_POSTERIOR_SDS``; 0 for the
    input itself);
  - ``LC``: as ``L`` with the colour cast against the input (``_guard.colour_cast``)
    squared added to the MSE (a change of the channel means' hue, which JPEG keeps within
    its DC step and luma does not see);
  - grid: s ∈ {0, 1, 2} posterior SDs × margin ∈ {0, 0.25, 0.5, 1} dB, for each of L, LC
    (24 candidates); main (NIQE, input always kept) beside them.

  Development sets (:func:`jpeg_dev_photos`, 10 images at 160×120: astronaut, camera,
  coffee, chelsea, rocket, immunohistochemistry, china, flower, round 7's generated
  rendered text and shapes; qualities :data:`JPEG_DEV_QUALITIES` 10, 20, 40, 60, 80, 90;
  each JPEG grid-aligned and cropped by (3, 5) px off the grid; 15 outputs each,
  :func:`jpeg_dev_outputs`: the dequantisation itself (the posterior mean in luma),
  Gaussian smoothing σ 0.5/1/2, TV denoising weight 0.02/0.05/0.1, unsharp masking amount
  0.5/1.5, gamma 0.9, brightness +0.03, a tint (R +0.02, B −0.02), added noise 3/255, a
  second JPEG round trip at the same quality, a median filter of 3 px; 1,800 cases) and
  controls that must be unjudged (each photo never quantised, the photo with noise 2/255,
  and a JPEG at quality 40 resized by 0.8 after decoding; same outputs; 450 cases). No
  network output (no trained DCPT model on this CPU session's budget). Selection rule:
  fewest outputs returned worse than the input by the reference RGB PSNR, pooled over the
  dev cases and controls, then the highest agreement (warned & worse + quiet & better),
  ties to the simpler (L before LC, fewer SDs, smaller margin).

  Held-out round (``--set jpeg-heldout``, declared here, run once after the pick is
  committed): :func:`jpeg_heldout_photos` (9 images in no dev case: cat, colorwheel,
  coins, clock, brick, a quarter of hubble_deep_field, grace_hopper, and two scenes
  generated with new seeds: dead leaves and rendered text), qualities
  :data:`JPEG_HELDOUT_QUALITIES` 8, 15, 30, 50, 70, 85, aligned and cropped by (5, 2) px;
  15 outputs of other strengths (:func:`jpeg_heldout_outputs`: the dequantisation,
  Gaussian σ 0.7/1.4, TV 0.03/0.08, bilateral, unsharp 1.0 and 0.3, gamma 1.1, brightness
  −0.03, a tint (G +0.02), noise 2/255, a second JPEG round trip at quality +10, a median
  of 3 px, a box blur of 2 px; 1,620 cases) and the controls (never quantised, noise
  2/255, a JPEG at quality 60 resized by 0.75: 405 cases). Merge condition (all must
  hold): the pick returns no output worse than its input (0); its agreement is above
  main's on the same cases; it returns at least half of the outputs better than their
  input among the judged cases; no control is judged. If it holds, the pick becomes the
  default measure for ``degradation="jpeg"`` (``choose_measure``); else it stays
  non-default.

  Dev round 1 (6399512, load 1.7-3.0; 2,250 cases, 450 controls; CPU 132 s): qualities
  read right on every judged input (10→10 ... 90→90) and no control judged, but 20 of
  the 120 JPEG inputs unjudged (rendered text at every quality; astronaut, coffee,
  flower at 10-20); main 1857 / 393 / 0 / 0, 82.5%; L at s0 m0 1835 / 227 / 22 / 166,
  88.9%, 22 returned worse; the rule's pick L s0 m0.25 1857 / 287 / 0 / 106, 87.2%, none
  returned worse, 37.2% of the better outputs returned (LC gave L's verdicts on every
  case). Two faults of the model, seen there and on a synthetic JPEG (not a dev image)
  whose clean image is known: (1) where the decoder clipped (a channel at 0 or 255: a
  black sky, white paper, saturated petals) the decoded luma leaves the comb, and those
  inputs read "quality 100, no comb"; (2) the maximum-likelihood Laplacian scale is 0 for
  a frequency whose coefficients all fell in the zero bin, so the posterior variance there
  was near 0 (synthetic, quality 50: the zero bin's mean X² 15.9, V 2.4; the input's
  estimated luma PSNR 42.6 dB against a true 36.4). **Amendment (written and committed
  after round 1's table and before round 2 ran):** blocks holding a clipped pixel are
  left out of the comb's evidence and of the score; the scale is integrated out over its
  posterior on the 80-scale grid (log-uniform prior) instead of set to its maximum. Dev
  round 2 reruns the same 24 candidates on the same dev cases (no longer blind) with the
  same selection rule; the held-out round, its sets and the merge condition are
  unchanged and still unrun.

  Dev round 2 (c4dc9d5, load 2.3-3.2; CPU 95 s): 108 of 120 JPEG inputs judged (the
  rendered text's 12 not: white paper clips in most blocks), qualities read right on all,
  no control judged; warned & worse / warned & better / quiet & worse / quiet & better:

  | candidate | counts | agreement | returned worse | better returned |
  |---|---|---|---|---|
  | main (NIQE, input kept) | 1857 / 393 / 0 / 0 | 82.5% | 0 | 0% |
  | L s0 m0 | 1824 / 199 / 33 / 194 | 89.7% | 33 | 59.3% |
  | **L s0 m0.25, the pick** | 1857 / 304 / 0 / 89 | **86.5%** | **0** | 27.2% |
  | L s1 m0 | 1846 / 205 / 11 / 188 | 90.4% | 11 | 57.5% |
  | L s1 m0.25 | 1857 / 306 / 0 / 87 | 86.4% | 0 | 26.6% |
  | L s2 m0 | 1846 / 217 / 11 / 176 | 89.9% | 11 | 53.8% |
  | L s2 m0.25 | 1857 / 310 / 0 / 83 | 86.2% | 0 | 25.4% |
  | L, margin 0.5 / 1 (any s) | | 83.4-84.1% / 82.5% | 0 / 0 | 6-11% / 0% |
  | LC s0 m0 / s1 m0 / s2 m0 | | 89.9 / 90.5 / 90.0% | 28 / 9 / 9 | |
  | LC at 0.25-1 dB | L's verdicts | | 0 | |

  The pick by quality (agreement, main's in brackets; better returned): 10: 65.3% (62.3%),
  8.6%; 20: 76.0% (73.3%), 11.1%; 40: 88.0% (82.0%), 36.0%; 60: 88.7% (82.7%), 37.5%;
  80: 96.0% (90.0%), 64.3%; 90: 97.3% (91.3%), 75.0%. Committed before the held-out round
  ran.

  **Held-out round** (run once at b6fce50 after the pick was committed; load 2.3-3.3; 2,025
  cases, 405 controls; CPU 88 s): 94 of 108 JPEG inputs judged, no control judged (0 of
  27); main 1691 / 334 / 0 / 0, 83.5%; **the pick 1691 / 275 / 0 / 59, agreement 86.4%,
  none returned worse, 24.4% of the judged cases' better outputs returned**. By quality
  (agreement, main's in brackets; better returned): 8: 68.9% (66.7%), 6.7%; 15: 78.9%
  (77.0%), 8.3%; 30: 86.7% (83.0%), 27.8%; 50: 90.4% (85.9%), 50.0%; 70: 93.0% (88.5%),
  66.7%; 85: 95.6% (90.4%), 100%. **The merge condition fails** on the share of better
  outputs returned (24.4% < 50%; returned worse 0, agreement above main's and no control
  judged all hold): the measure stays non-default (``MEASURES["quantisation"]``,
  ``MARGINS`` 0.25 dB) and ``choose_measure`` keeps NIQE for JPEG. Seen in the table and
  left: some inputs' quality was misread (declared 8 read as 4, 25 and 87; 15 as 19 and
  89; 50 and 70 as 19), yet none of them returned a worse output; at qualities 8-20 (the
  library's kind) the measure returns 7-11% of the better outputs: luma alone does not
  see what smoothing gains in the heavily quantised 4:2:0 chroma, which the reference's
  RGB PSNR counts.

  **Round B, the lead's second decision** (h68jpeg2; declared by the lead after round A,
  and written and committed here before round B ran: round A's images, qualities and
  outputs have been seen, which is why B is fresh). The measure and the pick are
  unchanged (``L s0 m0.25``, :data:`JPEG_PICK`; no amendment to ``iclr25._dequantise``).
  Held-out round B (``--set jpeg-heldout-b``, run once): :func:`jpeg_heldout_b_photos`, 9
  images in no earlier set of this benchmark (scikit-image's ``grass``; matplotlib's
  ``axes_grid/bivariate_normal.npy`` as a bicubic heat map and ``eeg.dat``'s traces on a
  grey chart; round 7's shapes and terrain, round 11's clouds and tiles, round 12's plaid
  and bookshelf, drawn with new seeds 6901-6906: :data:`JPEG_B_GENERATED`); qualities
  :data:`JPEG_HELDOUT_B_QUALITIES` 12, 25, 45, 65, 75, 95 (none of dev's or A's), each
  grid-aligned and cropped by (2, 7) px off the grid; 15 outputs of the same family at
  other strengths (:func:`jpeg_heldout_b_outputs`: the dequantisation, Gaussian σ 0.6/1.2,
  TV 0.04/0.15, bilateral (colour 0.08, space 1.0), unsharp 0.7 and 2.0, gamma 0.95,
  brightness +0.015, a tint (B +0.02), noise 1/255, a second JPEG round trip at quality
  +5 (at most 95), a median of 5 px, a box blur of 3 px; 1,620 cases) and the same
  controls (never quantised, noise 2/255, and a JPEG at quality 55 resized by 0.7 after
  decoding: 405 cases). **Condition B** (the issue's own criteria), on round B: (1) the
  pick returns no output worse than its input by the reference RGB PSNR (0); (2) its
  agreement is above NIQE's (the input kept) on the same cases; (3) no control is judged.
  The share of the judged cases' better outputs returned is reported, not a condition.
  If condition B holds, ``"quantisation"`` becomes the measure ``choose_measure`` picks
  for ``degradation="jpeg"`` (``restore(..., degradation="jpeg")`` and ``dcpt restore``
  whose classifier says jpeg judge by it; unjudged inputs keep the input); if it fails,
  the measure stays non-default and round B is recorded here.

  **Round B** (run once at 94da7aa, after the decision above was committed; load 2.2-2.7;
  2,025 cases, 405 controls; CPU 70 s): 107 of 108 JPEG inputs judged (one heat map at 95
  not), every quality read right but the heat map's at 75 (read 74), no control judged (0
  of 27); warned & worse / warned & better / quiet & worse / quiet & better:

  | | counts | agreement | returned worse | better returned |
  |---|---|---|---|---|
  | main (NIQE, input kept) | 1625 / 400 / 0 / 0 | 80.2% | 0 | 0% |
  | the pick, L s0 m0.25 | 1617 / 311 / 8 / 89 | **84.2%** | **8** | 25.6% |

  By quality (agreement, main's in brackets; returned worse; better returned): 12: 71.9%
  (66.7%), 0, 15.6%; 25: 77.0% (72.6%), 0, 16.2%; 45: 82.2% (76.7%), 0, 23.8%; 65: 85.9%
  (80.4%), 2, 32.1%; 75: 87.8% (82.6%), 2, 34.0%; 95: 94.4% (90.4%), 4, 71.4%. By image:
  grass 95.6% (88.3%), heat map 60.0% (57.8%), EEG traces 95.6% (91.1%), shapes 70.6%
  (65.0%), terrain 97.2% (93.3%), clouds 66.7% (63.3%), tiles 79.4% (73.3%), plaid 90.0%
  (83.3%), bookshelf 93.9% (88.3%). **Condition B fails on (1)**: 8 outputs returned worse
  than their input by the reference RGB PSNR (agreement above NIQE's and no control judged
  both hold), so the measure stays non-default and ``choose_measure`` keeps NIQE for
  JPEG. The 8, each 0.001-0.30 dB below the input: the dequantisation at quality 95 (EEG
  traces aligned and off the grid, 0.002 dB; terrain both, 0.02 dB) and at 75 (bookshelf
  off the grid, 0.001 dB), and the second JPEG round trip at quality +5 (terrain and plaid
  at 65, tiles at 75; 0.07-0.30 dB). Diagnosed after the decision (the 8 cases re-scored; no
  decision rests on it): every one is better than its input in luma by the reference
  (+0.07 to +0.28 dB; the measure said +0.31 to +0.54), and worse in RGB by what luma does
  not hold: the 4:2:0 chroma (a second round trip subsamples it again; at quality 95 the
  EEG traces' luma is 43.7 dB and their RGB 27.5 dB, so a luma gain moves the RGB error
  through its chroma part). The measure scores luma; the reference scores RGB.

  **Round C, the candidate LX** (h68jpeg3; this rule, the candidates, the sets and
  condition C written and committed before any candidate ran on data). Round B's 8 were
  better in luma and worse in RGB, which the reference scores. Candidate ``LX``
  (``iclr25._dequantise``, :meth:`QuantPosterior.terms` given the input;
  ``quantisation_psnr(..., rgb=True)``): ours' expected squared error against the clean
  image in RGB, per channel value, over the grid's complete unclipped blocks: the luma part
  from the existing posterior (``M``, ``V``), the chroma part with the clean chroma unknown,
  taken as the input's (Cb, Cr at full resolution, JPEG's YCbCr) plus an error of mean 0
  independent of any output, so ours' change of the input's chroma ``δ`` counts as error;
  with ``A`` JPEG's YCbCr -> RGB matrix and ``G = AᵀA``, per pixel ``3 E(Z_Y − X_Y)² + 2
  (Z_Y − M_Y) G_YC·δ + δᵀG_CCδ``; dropped: the clean chroma's own error ``E εᵀG_CCε`` and
  its covariance with the clean luma ``−2 E X_Y G_YC·ε``, the same for every output and the
  input (so the difference ours − input is exact under the model, and the dB level leaves
  them out). Its PSNR ``−10 log10(MSE)`` (0 posterior SDs), ours returned iff the input is
  judged and ours' PSNR is at least the margin above the input's. Candidates:
  :data:`JPEG_LX_CANDIDATES`, margins 0, 0.25, 0.5 dB (``LX s0 m0``, ``LX s0 m0.25``, ``LX
  s0 m0.5``). Selection on ``--set jpeg-dev`` (the same cases as before, no longer blind;
  ``--set jpeg-lx-dev`` reports LX beside L's pick and L at the same margins): the fewest
  outputs returned worse than the input by the reference RGB PSNR, pooled over the dev
  cases and controls, then the highest agreement, ties to the smaller margin. Also
  reported, as a diagnosis and no decision input: LX on round B's 8 returned-worse cases
  (round B is no longer held out).

  Held-out round C (``--set jpeg-heldout-c``, run once, after the pick is committed):
  :func:`jpeg_heldout_c_photos`, 9 generated scenes drawn with seeds no set used (7101-7109,
  :data:`JPEG_C_GENERATED`: round 7's dead leaves, shapes and terrain, round 11's circuit,
  clouds and tiles, round 12's plaid, foam and sign; other discs, shapes, relief, boards,
  skies, cells, stripes, rings, strokes); qualities :data:`JPEG_HELDOUT_C_QUALITIES` 10, 20,
  35, 55, 80, 90, each grid-aligned and cropped by (6, 1) px off the grid; 15 outputs of the
  same family at new strengths (:func:`jpeg_heldout_c_outputs`: the dequantisation (the
  posterior mean in luma), Gaussian σ 0.8/1.6, TV 0.025/0.12, bilateral (colour 0.06,
  space 1.2), unsharp 0.4 and 1.2, gamma 1.05, darker 0.02, a tint (R +0.015), noise
  1.5/255, a second JPEG round trip at quality +15 (at most 95), a median of 4 px, a box
  blur of 4 px; 1,620 cases) and the same controls (never quantised, noise 2/255, and a
  JPEG at quality 50 resized by 0.85 after decoding: 405 cases). **Condition C** (=
  condition B), on round C: (1) the pick returns no output worse than its input by the
  reference RGB PSNR (0); (2) its agreement is above NIQE's (the input kept) on the same
  cases; (3) no control is judged. The share of the judged cases' better outputs returned
  is reported, not a condition. If condition C holds, the pick's measure
  (``"quantisation_rgb"``) becomes the one ``choose_measure`` picks for
  ``degradation="jpeg"`` at the pick's margin; if it fails, it stays non-default and round
  C is recorded here. L (``"quantisation"``) stays as it is, for the record.

  Dev (``--set jpeg-lx-dev``, run at 2f2872c's rule; load 2.9-4.1; CPU 144 s with round B's
  diagnosis): 108 of 120 JPEG inputs judged, no control judged (0 of 30); warned & worse /
  warned & better / quiet & worse / quiet & better:

  | candidate | counts | agreement | returned worse | better returned |
  |---|---|---|---|---|
  | main (NIQE, input kept) | 1857 / 393 / 0 / 0 | 82.5% | 0 | 0% |
  | L s0 m0 / m0.25 / m0.5 | (dev round 2) | 89.7 / 86.5 / 84.1% | 33 / 0 / 0 | 59 / 27 / 11% |
  | LX s0 m0 | 1844 / 208 / 13 / 185 | 90.2% | 13 | 56.6% |
  | **LX s0 m0.25, the pick** | 1857 / 304 / 0 / 89 | **86.5%** | **0** | 27.2% |
  | LX s0 m0.5 | 1857 / 358 / 0 / 35 | 84.1% | 0 | 10.7% |

  At 0.25 and 0.5 dB LX gives L's verdicts on every dev case (by quality, the pick's
  agreement: 10: 65.3%, 20: 76.0%, 40: 88.0%, 60: 88.7%, 80: 96.0%, 90: 97.3%); at 0 dB it
  returns 13 worse (L 33): Gaussian σ 0.5 (7) and the second round trip at the same quality
  (6). Pick: LX s0 m0.25 (0 returned worse; 86.5% over m0.5's 84.1%), committed before
  round C runs. Round B's 8 (a diagnosis, no decision input; ref = the reference's RGB
  change, L and LX the estimated change): the three second round trips drop below the
  input under LX (tiles q75 −1.09 dB, plaid q65 −0.71 dB, both kept at every margin; terrain
  q65 +0.21 dB, returned at 0 dB only), the five dequantised outputs (EEG traces q95 both,
  terrain q95 both, bookshelf q75 off the grid; ref −0.001 to −0.020 dB) score as under L
  (+0.35 to +0.54 dB: the posterior mean keeps the input's chroma, so δ = 0 and LX = L) and
  are still returned: their RGB loss is the cross term ``−2 (Z_Y − Y_Y) G_YC·ε`` with the
  clean chroma's error ``ε``, which LX takes as independent of the output (mean 0); there
  it is not (the luma correction sits on the edges where the 4:2:0 chroma errs). Round B
  pooled under LX: m0 14 returned worse (85.5%), m0.25 5 (84.2%), m0.5 2 (81.7%).

  **Round C** (run once at 767285b, after the pick was committed; load 3.4-4.1; 2,025 cases,
  405 controls; CPU 64 s): 108 of 108 JPEG inputs judged, no control judged (0 of 27);
  qualities read right on every scene but the sign (declared 10, 20, 35, 55, 80, 90 read
  37, 4, 31, 4, 4, 4):

  | | counts | agreement | returned worse | better returned |
  |---|---|---|---|---|
  | main (NIQE, input kept) | 1684 / 341 / 0 / 0 | 83.2% | 0 | 0% |
  | **LX s0 m0.25, the pick** | 1674 / 268 / 10 / 73 | **86.3%** | **10** | 24.0% |
  | L s0 m0.25 (beside it) | 1674 / 268 / 10 / 73 | 86.3% | 10 | 24.0% |

  By quality (agreement, NIQE's in brackets; returned worse; better returned): 10: 73.3%
  (69.6%), 0, 12.2%; 20: 80.0% (76.3%), 0, 15.6%; 35: 85.2% (81.1%), 2, 25.5%; 55: 88.1%
  (82.2%), 0, 33.3%; 80: 90.7% (87.8%), 4, 36.4%; 90: 93.3% (90.4%), 4, 46.2%. By scene:
  dead leaves 85.0% (78.3%), shapes 82.2% (77.8%), terrain 97.8% (91.1%), circuit 74.4%
  (76.7%), clouds 76.1% (72.8%), tiles 85.6% (78.9%), plaid 91.1% (84.4%), foam 91.7%
  (87.8%), sign 82.2% (83.3%). **Condition C fails on (1)**: 10 outputs returned worse
  (agreement above NIQE's and no control judged both hold), so ``"quantisation_rgb"``
  stays a registered measure no default uses and ``choose_measure`` keeps NIQE for JPEG.
  All 10 are the dequantisation, whose chroma is the input's (so LX = L, and L returns the
  same 10): the circuit at 35, 80 and 90 and the foam at 80, aligned and off the grid,
  0.002-0.008 dB below the input (the cross term of round B's diagnosis), and the sign at
  90 aligned and off the grid, 1.08 and 1.01 dB below: its quality read as 4 (seen after
  the decision: the comb of IJG quality 4 is 838 nats likelier than no comb against 344 for
  the true 90; the board's many identical flat blocks put their DC on any comb that fits
  their one value, each counted as independent evidence), so the posterior mean moved
  coefficients by a table 32 times too coarse on average (DC
  step 200 against 3). No second round trip (quality +15) was
  returned worse by either.

Results (``--quick``, 96×72; figures and causes in ``iclr25._guard``'s docstring),
agreement at margin 0 → the default margin, and outputs the default returns worse than
the input: round 3 noise 84.4% → 88.7% of 231, 25 (10.8%); blur 78.3% → 78.8% of 189, 1;
defocus 77.8% → 78.3% of 189, 1; low light 69.5% → 70.0% of 210, 57 (27.1%, all on three
dark scenes); round 4 noise (fixed estimate) 95.2% → 94.8% of 210, 3 (1.4%); round 5 (fixed
blur width) blur 88.9% → 87.3% of 189, 10 (5.3%), defocus 82.0% → 83.1% of 189, 13 (6.9%);
round 6 (width read from steps; measured once) blur 92.1% → 91.0% of 189, 2 (1.1%),
defocus 79.9% → 78.8% of 189, 0 (main's single-probe width on round 6: blur 81.0% →
81.5%, 4; defocus 79.9% → 79.4%, 3). Round 6 low
light at the default margin (measured once, 264 outputs; warned&worse / warned&better /
quiet&worse / quiet&better): the rule before round 6 22 / 3 / 79 / 160, agreement 68.9%,
79 returned worse (29.9%); with it 92 / 93 / 9 / 70, 61.4%, 9 (3.4%). Since round 6 the
low-light reports apply the rule (round 3's low light: 66 / 54 / 7 / 83, 71.0%).
Round 7 defocus (measured once, 189 outputs): the posterior PSNR at its default margin (0)
121 / 23 / 1 / 44, 87.3%, 1 returned worse (0.5%); at 1 dB 73.5%, 0; main's re-blur at
its default (1 dB) 119 / 54 / 3 / 13, 69.8%, 3 (at 0: 73.0%, 10). The posterior PSNR on
the development sets (default margin): round 3 89.9%, 1 returned worse; round 5 94.2%, 4;
round 6 86.2%, 6; the 6-photo set 94.4% (below the input). Round 7 low light
(measured once, 432 outputs, default margin): the library's (round 6's rule) 88 / 85 / 0 /
259, 80.3%, none returned worse; h68ll7's scene-specific ideal 85 / 53 / 3 / 291, 87.0%, 3;
at margin 0 80.6% (0 worse) and 88.4% (6). The low-light reports apply round 6's rule only
where the ``iclr25`` imported has it (``not_underexposed``). Round 8 low light (h68ll8;
``--quick --side 192``, measured once, 432 outputs, default margin): the noise-floor rule
114 / 145 / 0 / 173, 66.4%, none returned worse; main's (round 6's rule) 60 / 99 / 54 /
219, 64.6%, 54 (12.5%: a black crop of retina and a dim dusk); at margin 0 67.1% (0) and
63.7% (61). The rule on the development sets (default margin; before it): the first set
52.8% (65.7%), 1 returned worse (2); ``lowlight-fresh`` 41.7% (75.8%), 0 (0); round 3
73.3% (71.0%), 0 (7); round 6 57.2% (61.4%), 0 (9); round 7 77.8% (80.3%), 0 (0).
Round 9 low light (h68ll9; ``--quick --side 256``, measured once, 396 outputs, default
margin): the rule (``low_key``, ``blank_sigma``) 137 / 50 / 0 / 209, 87.4%, none returned
worse (typical photos 83.7%, dark 97.2%); main's (h68ll8's) 137 / 83 / 0 / 176, 79.0%,
none (typical 72.2%, dark 97.2%). The rule on the development sets (default margin;
h68ll8's): the first set 58.3% (52.8%), 2 returned worse (1); ``lowlight-fresh`` 41.7%
(41.7%), 0; round 3 71.0% (73.3%), 7 (0: a dim flower crop at a linear darkening); round 6
61.0% (57.2%), 0; round 7 80.3% (77.8%), 0; round 8 74.1% (66.4%), 0.
Round 9 defocus (h68post9; measured once, 216 outputs, default margin 0; the unsharp outputs
fixed): the library's 1/f² prior 80 / 22 / 16 / 98, **82.4%, 16 returned worse (7.4%)**; the
candidate not merged (the exponent read with the radius and the grid neighbours) 84 / 28 /
12 / 92, 81.5%, 12 returned worse (5.6%); on the photos and the mosaic 93.2% against 91.4%,
on the fabric and the fingerprint 46% against 56%. Round 9 blur (the re-blur, unchanged): 65
/ 29 / 5 / 117, 84.3% at 1 dB, 5 returned worse (87.5%, 9 at margin 0). The development sets
with the unsharp outputs fixed (defocus, default margin; the candidate, the library's in
brackets): round 3 91.0%, 1 (89.4%, 2); round 5 94.2%, 3 (92.6%, 7); round 6 91.5%, 4
(83.6%, 8); round 7 85.2%, 1 (84.1%, 2); blur by the re-blur at 1 dB: round 3 88.4%, 1;
round 5 85.7%, 4; round 6 86.2%, 2.
The defaults' sweep (h68dm10; rounds 3, 5, 6, 7, 9, pooled, agreement and returned worse):
defocus at 2 SDs, 0 dB (main's) 86.3%, 35; the rule's pick, 0 SDs, 1.5 dB: 58.0%, 0 of
972; blur at 1 dB 86.1%, 12; the pick, 5 dB (the grid's end): 55.2%, 2 of 783 (the whole
table in ``iclr25._guard``'s docstring). Round 10 (measured once, 243 cases each): blur at
5 dB 81 / 109 / 0 / 53, 55.1%, none returned worse (main's 1 dB: 75 / 36 / 6 / 126, 82.7%,
6); defocus at 1.5 dB, 0 SDs 113 / 125 / 0 / 5, 48.6%, none (main's: 103 / 46 / 10 / 84,
77.0%, 10).

The candidates' sweep (h68blur11; pooled agreement and returned worse): the pick, the
posterior at 0 dB AND the re-blur by its likeliest kernel at 5 dB: blur 59.4%, 0 of 783
(main's 55.2%, 2); defocus 60.4%, 0 of 972 (main's 58.0%, 0); the posterior alone at 0 dB
93.7% (31) and 86.2% (52). Round 11 (measured once, 216 cases each): the pick, blur 80 /
88 / 0 / 48, 59.3%, none returned worse; defocus 136 / 66 / 0 / 14, 69.4%, none; main's
(5 dB; 1.5 dB) blur 80 / 90 / 0 / 46, 58.3%, none; defocus 134 / 80 / 2 / 0, 62.0%, 2.

Each verdict is a 2×2 table: the check warned (below the input; below the input or the
classical result) or not, against the reference's worse or not. Target: ≥ 90% agreement.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/dcpt_checks.py --quick [--set ...]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import torch
from _timing import row

from iclr25._guard import (
    MEASURES,
    R2R_SE_BLOCK,
    TINT_CAST,
    _Inputs,
    choose_measure,
    colour_cast,
    gaussian_psf,
    reblur,
)
from iclr25.datasets.images import degrade, psnr
from iclr25.dcpt.baselines import _classical, _richardson_lucy, psfs
from iclr25.lowlight.enhancement import CLASSICAL as LL_CLASSICAL

M = "dcpt_checks"
TARGET = 0.9


def photos(side: int) -> dict[str, torch.Tensor]:
    """The held-out photos, (3, h, w) in [0, 1], longer side ``side``, 4:3."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image
    from sklearn.datasets import load_sample_images

    raw = dict(zip(("china", "flower"), load_sample_images().images, strict=True))
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        raw["grace_hopper"] = np.asarray(Image.open(f).convert("RGB"))
    for n in ("moon", "cell", "page"):
        raw[n] = np.repeat(getattr(skimage.data, n)()[..., None], 3, -1)
    out = {}
    for n, a in raw.items():
        h, w = a.shape[:2]
        ch, cw = (h, h * 4 // 3) if w * 3 >= h * 4 else (w * 3 // 4, w)
        a = a[(h - ch) // 2:(h + ch) // 2, (w - cw) // 2:(w + cw) // 2]
        im = Image.fromarray(a).resize((side, side * 3 // 4), Image.LANCZOS)
        out[n] = torch.from_numpy(np.asarray(im, dtype=np.float64) / 255).permute(2, 0, 1)
    return out


def _fit(a: np.ndarray, side: int) -> torch.Tensor:
    """(h, w, 3) uint8 -> (3, side·3/4, side) float64: centre 4:3 crop, Lanczos resize."""
    from PIL import Image

    h, w = a.shape[:2]
    ch, cw = (h, h * 4 // 3) if w * 3 >= h * 4 else (w * 3 // 4, w)
    a = a[(h - ch) // 2:(h + ch) // 2, (w - cw) // 2:(w + cw) // 2]
    im = Image.fromarray(a).resize((side, side * 3 // 4), Image.LANCZOS)
    return torch.from_numpy(np.asarray(im, dtype=np.float64) / 255).permute(2, 0, 1)


def _part(a: np.ndarray, rows: tuple[float, float], cols: tuple[float, float]) -> np.ndarray:
    """The crop of ``a`` (h, w, ...) between the fractions ``rows`` and ``cols`` of its sides."""
    h, w = a.shape[:2]
    return a[int(rows[0] * h):int(rows[1] * h), int(cols[0] * w):int(cols[1] * w)]


def _grey(a: object) -> np.ndarray:
    """``a`` (h, w) stretched to [0, 255] as 8-bit grey, three equal channels (h, w, 3)."""
    a = np.asarray(a, dtype=np.float64)
    a = (a - a.min()) / (a.max() - a.min())
    return np.repeat((a * 255 + 0.5).astype(np.uint8)[..., None], 3, -1)


def _colour_samples() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's ``china`` and ``flower`` and matplotlib's ``grace_hopper``, (h, w, 3)
    uint8."""
    import matplotlib.cbook as cbook
    from PIL import Image
    from sklearn.datasets import load_sample_images

    china, flower = load_sample_images().images
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        hopper = np.asarray(Image.open(f).convert("RGB"))
    return china, flower, hopper


def _lfw_montage(i: int) -> np.ndarray:
    """A 3 × 4 montage of scikit-image's ``lfw_subset`` images i to i + 11 (row by row),
    :func:`_grey`."""
    import skimage.data

    lfw = skimage.data.lfw_subset()
    return _grey(np.block([[lfw[i + 4 * r + c] for c in range(4)] for r in range(3)]))


def fresh_photos(side: int) -> dict[str, torch.Tensor]:
    """The low-light check's fresh held-out photos (issue 68, round 2), (3, h, w) in [0, 1]:
    none used by a testbed, a test, NIQE's pristine model or :func:`photos`. Colour:
    matplotlib's ``Minduka_Present_Blue_Pack`` (clip art, composited on white) and two
    shaded reliefs of its elevation samples (``topobathy``: ``gist_earth``;
    ``jacksboro_fault_dem``: ``terrain``; ``LightSource(315, 45)``, ``blend_mode="soft"``).
    Grey (three equal channels): scikit-image's ``clock`` (motion-blurred) and
    ``microaneurysms``, a 3 × 4 montage of the first 12 ``lfw_subset`` faces, and
    matplotlib's MRI slice ``s1045.ima``."""
    import matplotlib.cbook as cbook
    import skimage.data
    from matplotlib import colormaps
    from matplotlib.colors import LightSource
    from PIL import Image

    def u8(a):
        a = np.asarray(a, dtype=np.float64)
        a = (a - a.min()) / (a.max() - a.min())
        return (a * 255 + 0.5).astype(np.uint8)

    def grey(a):
        return np.repeat(u8(a)[..., None], 3, -1)

    raw = {}
    with cbook.get_sample_data("Minduka_Present_Blue_Pack.png") as f:
        rgba = np.asarray(Image.open(f).convert("RGBA"), dtype=np.float64) / 255
    raw["present"] = u8(rgba[..., :3] * rgba[..., 3:] + (1 - rgba[..., 3:]))
    ls = LightSource(azdeg=315, altdeg=45)
    for name, key, cmap in (("topobathy", "topo", "gist_earth"),
                            ("jacksboro_fault_dem", "elevation", "terrain")):
        z = np.asarray(cbook.get_sample_data(f"{name}.npz")[key], dtype=np.float64)
        raw[name] = u8(ls.shade(z, cmap=colormaps[cmap], blend_mode="soft")[..., :3])
    raw["clock"] = grey(skimage.data.clock())
    raw["microaneurysms"] = grey(skimage.data.microaneurysms())
    faces = skimage.data.lfw_subset()[:12]
    raw["faces"] = grey(np.block([[faces[4 * r + c] for c in range(4)] for r in range(3)]))
    with cbook.get_sample_data("s1045.ima.gz") as f:
        raw["mri"] = grey(np.frombuffer(f.read(), np.uint16).reshape(256, 256))
    return {n: _fit(a, side) for n, a in raw.items()}


#: The fresh set's low-light degradations (``degrade(..., "low_light", **p)``), none the
#: library's default ranges (k 0.08-0.2, gamma 1.5-2.2, λ 300, σ_r 0.01): very dark (about
#: 8 photons at white), dim with a shallow curve, and steep with stronger read noise.
FRESH_DARK = ({"k": 0.05, "gamma": 1.8, "lam": 150.0, "read_sigma": 0.01},
              {"k": 0.3, "gamma": 1.3, "lam": 1000.0, "read_sigma": 0.005},
              {"k": 0.12, "gamma": 2.5, "lam": 300.0, "read_sigma": 0.02})


def _noisy(g: torch.Tensor, sigma: float, seed: int) -> torch.Tensor:
    n = torch.randn(g.shape, generator=torch.Generator().manual_seed(seed), dtype=g.dtype)
    return (g + sigma * n).clamp(0, 1)


def _gain(y: torch.Tensor, target: float) -> torch.Tensor:
    """A linear gain to mean ``target``, clipped (highlights burn out)."""
    return (y * target / y.mean().clamp(min=1e-6)).clamp(0, 1)


def old_outputs(y: torch.Tensor, d: int) -> dict[str, torch.Tensor]:
    """The outputs judged on :func:`photos` (last session's list)."""
    from iclr25.lowlight.baselines import gamma_to_mean

    g = gamma_to_mean(y)
    return {k: f(y) for k, f in LL_CLASSICAL.items()} | {
        "gamma to 0.15": gamma_to_mean(y, target=0.15),
        "gamma to 0.85": gamma_to_mean(y, target=0.85),
        "tinted": (g * torch.tensor([1.1, 1.0, 0.9], dtype=g.dtype)[:, None, None]).clamp(0, 1),
        "noisier": _noisy(g, 0.1, d),
        "flattened": 0.4 * g + 0.3}


def fresh_outputs(y: torch.Tensor, d: int) -> dict[str, torch.Tensor]:
    """The outputs judged on :func:`fresh_photos`: the classical three, gamma curves to
    means 0.3, 0.7 and 0.9, linear gains to means 0.5 and 0.8 (clipped), a cool tint
    (× (0.9, 1, 1.1)), added noise (σ 0.05) and flattening (0.5 · x + 0.25) of the gamma
    result; the network is added by :func:`lowlight_cases`."""
    from iclr25.lowlight.baselines import gamma_to_mean

    g = gamma_to_mean(y)
    return {k: f(y) for k, f in LL_CLASSICAL.items()} | {
        **{f"gamma to {t:g}": gamma_to_mean(y, target=t) for t in (0.3, 0.7, 0.9)},
        **{f"gain to {t:g}": _gain(y, t) for t in (0.5, 0.8)},
        "cool": (g * torch.tensor([0.9, 1.0, 1.1], dtype=g.dtype)[:, None, None]).clamp(0, 1),
        "noisier": _noisy(g, 0.05, 100 + d),
        "flattened": 0.5 * g + 0.25}


def _rl(y: torch.Tensor, psf: np.ndarray) -> torch.Tensor:
    a = y.permute(1, 2, 0).numpy()
    return torch.from_numpy(_richardson_lucy(a, psf)).permute(2, 0, 1).clamp(0, 1)


def blur_cases(clean: dict[str, torch.Tensor]) -> list[dict]:
    """One record per (photo, blur, output): reference PSNRs and both measures' scores."""
    from skimage.filters import unsharp_mask

    from iclr25._guard import disk_psf

    recs = []
    for name, J in clean.items():
        for fam, width in [("blur", s) for s in (1.5, 2.0, 2.5)] + [
                ("defocus", r) for r in (2.0, 3.0, 4.0)]:
            k = gaussian_psf(width) if fam == "blur" else disk_psf(width)
            y = reblur(J[None], torch.from_numpy(k))[0].clamp(0, 1)
            family = (1.5, 2.0, 2.5) if fam == "blur" else (2.0, 3.0, 4.0)
            mk = gaussian_psf if fam == "blur" else disk_psf
            cls = _classical(y[None], fam)[0].double()

            def rl(w, mk=mk):
                return lambda b: torch.stack([_rl(im.double(), mk(w)) for im in b])
            good = rl(width)
            # each output as the restorer that made it: blur's measure re-runs it (h68redeg)
            fs = {f"RL {w:g}": rl(w) for w in family if w != family[1]}
            fs["unsharp"] = lambda b: torch.stack([torch.from_numpy(unsharp_mask(
                im.double().permute(1, 2, 0).numpy(), radius=2, amount=1, channel_axis=2)
                ).permute(2, 0, 1).clamp(0, 1) for im in b])   # axis 2: see new_blur_outputs
            fs["tone-shifted"] = lambda b, good=good: (0.8 * good(b) + 0.1).clamp(0, 1)
            fs["blurred further"] = lambda b: reblur(b, torch.from_numpy(gaussian_psf(1.0)))
            inp = _Inputs(y[None], None, fam)
            old = psfs(fam)[0]

            def new_score(o, f, inp=inp, m=MEASURES[choose_measure(None, fam)]):
                return float(m.score(o[None], f, inp)[0])

            def old_score(o, f, y=y, old=old):
                return float(psnr(reblur(o[None], old), y[None]))

            arms = (lambda b: b.clamp(0, 1), lambda b, fam=fam: _classical(b, fam).to(b))
            for oname, f in fs.items():
                recs.append(_record(f"{name} {fam} {width:g}", oname, J, y, cls,
                                    f(y[None])[0], {"new": new_score, "old": old_score},
                                    higher=True, restorers=(f, *arms)))
    return recs


def _record(case: str, out_name: str, J, y, cls, o, scorers, higher,
            restorers: tuple | None = None) -> dict:
    """Reference PSNRs of the output, input and classical result, and each measure's.
    ``restorers``: the (output's, input's, classical) restorers, passed to each scorer as
    its second argument (the measures that re-run the restorer: r2r, the round trip)."""
    rec = {"case": case, "out": out_name, "ref": (float(psnr(o, J)), float(psnr(y, J)),
                                                 float(psnr(cls, J)))}
    for m, f in scorers.items():
        hi = higher if isinstance(higher, bool) else higher[m]
        s = ((f(o), f(y), f(cls)) if restorers is None else
             tuple(f(v, r) for v, r in zip((o, y, cls), restorers, strict=True)))
        rec[m] = s if hi else tuple(-v for v in s)
    return rec


def prev_exposure(o: torch.Tensor, y: torch.Tensor) -> float:
    """Last session's low-light measure, 10 log10(1/(e² + c² + σ²)), e = mean − 0.5."""
    from iclr25._guard import noise_sigma

    mse = ((o.mean() - 0.5) ** 2 + colour_cast(o[None], y[None])[0] ** 2
           + noise_sigma(o[None])[0] ** 2)
    return float(10 * torch.log10(1 / mse.clamp(min=1e-10)))


def lowlight_cases(clean: dict[str, torch.Tensor], steps: int, seed: int,
                   fresh: bool = False, dark_params: tuple[dict, ...] | None = None,
                   outputs=None, darken=None, dark=None, gains=None) -> list[dict]:
    """One record per (photo, darkening, output): the reference PSNRs and each measure's
    scores. ``fresh``: :data:`FRESH_DARK` and :func:`fresh_outputs` (else the library's
    default darkening, 2 draws, and :func:`old_outputs`); ``dark_params`` and ``outputs``
    (round 3) override both; ``darken(J, p, seed)`` (round 9) replaces ``degrade``'s low
    light for ``dark_params``; ``dark`` ((name, d) -> the dark image; walk 10) replaces
    all of them. ``gains`` (name -> f(output, input), each (1, 3, H, W), -> dB; h68ll15):
    each candidate's gain of the output over the input, in the record's ``"gains"``."""
    from iclr25 import _guard
    from iclr25._guard import lowlight_psnr, niqe
    from iclr25.lowlight import ZeroReferenceEnhancer

    # round 6's no-verdict rule, where the imported library has it (main before round 7)
    unjudged = getattr(_guard, "not_underexposed", None)

    if dark is not None:
        pass
    elif darken is not None:
        dark = {(n, d): darken(J, p, seed + 10 * i + d)
                for i, (n, J) in enumerate(clean.items()) for d, p in enumerate(dark_params)}
    elif fresh or dark_params:
        dark = {(n, d): degrade(J.float(), "low_light", seed=seed + 10 * i + d, **p).double()
                for i, (n, J) in enumerate(clean.items())
                for d, p in enumerate(dark_params or FRESH_DARK)}
    else:
        dark = {(n, d): degrade(J.float(), "low_light", seed=seed + 10 * i + d).double()
                for i, (n, J) in enumerate(clean.items()) for d in range(2)}
    est = ZeroReferenceEnhancer(width=8, steps=steps, crop=32, batch_size=2,
                                seed=seed).fit([y.float() for y in dark.values()])
    measures = {"new": lambda o, y: float(lowlight_psnr(o[None], y[None])),
                "prev": prev_exposure, "old": lambda o, y: -float(niqe(o[None].float()))}
    recs = []
    for (name, d), y in dark.items():
        J = clean[name]
        outs = (outputs or (fresh_outputs if fresh else old_outputs))(y, d)
        outs["network"] = est.transform(y.float(), check=False).double()
        sc = {m: {k: f(v, y) for k, v in outs.items()} for m, f in measures.items()}
        best = {m: max(LL_CLASSICAL, key=sc[m].get) for m in measures}
        s_in = {m: f(y, y) for m, f in measures.items()}
        grey = bool((J[0] == J[1]).all() and (J[1] == J[2]).all())
        why = unjudged(y[None])[0] if unjudged is not None else None
        for oname, o in outs.items():
            rec = {"case": f"{name} low light {d}", "out": oname,
                   "ref": (float(psnr(o, J)), float(psnr(y, J)), float(psnr(outs[best["new"]], J))),
                   "ref_cls": {m: float(psnr(outs[best[m]], J)) for m in measures},
                   "grey": grey, "why": why, "x": y}
            for m in measures:
                rec[m] = (sc[m][oname], s_in[m], sc[m][best[m]])
            if gains:
                rec["gains"] = {k: float(g(o[None], y[None])) for k, g in gains.items()}
            if grey:
                tint = float(colour_cast(o[None], J[None]))   # J grey: the output's chroma
                rec["colour"] = (tint > TINT_CAST,
                                 float(colour_cast(o[None], y[None])) > TINT_CAST)
            recs.append(rec)
    return recs


def _verdict(r: dict, measure: str, against: str) -> tuple[bool, bool]:
    """(the measure warned, the reference finds the output worse) for one record."""
    o, i, c = r["ref"]
    c = r.get("ref_cls", {}).get(measure, c)
    so, si, sc = r[measure]
    return (so < si or (against == "either" and so < sc),
            o < i or (against == "either" and o < c))


def confusion(recs: list[dict], measure: str, against: str) -> tuple[np.ndarray, float]:
    """2×2 counts [[warned & worse, warned & not], [not warned & worse, neither]] and the
    agreement. ``against``: "input" or "either" (the input or the classical result, the one
    the measure picks)."""
    t = np.zeros((2, 2), int)
    for r in recs:
        warned, worse = _verdict(r, measure, against)
        t[0 if warned else 1, 0 if worse else 1] += 1
    return t, float(np.trace(t) / t.sum())


NAMES = {"new": "today's", "prev": "last session's exposure", "old": "NIQE"}


def _counts(t: np.ndarray) -> str:
    return (f"warned&worse {t[0, 0]}, warned&not worse {t[0, 1]}, quiet&worse {t[1, 0]}, "
            f"quiet&not worse {t[1, 1]}")


def agreement_note(recs: list[dict], tables: dict[str, np.ndarray], against: str) -> str:
    """A row's note: each measure's confusion counts and, when today's agreement misses the
    target, how many disagreements the target allows and which outputs they are."""
    t = tables["new"]
    n = int(t.sum())
    out = f"{n} outputs; " + "; ".join(f"{NAMES[m]} measure: {_counts(c)}"
                                         for m, c in tables.items())
    if np.trace(t) / n >= TARGET:
        return out
    off: dict[str, int] = {}
    for r in recs:
        warned, worse = _verdict(r, "new", against)
        if warned != worse:
            off[r["out"]] = off.get(r["out"], 0) + 1
    top = sorted(off.items(), key=lambda kv: -kv[1])[:5]
    return (out + f"; missed: {TARGET:.0%} of {n} allows {int((1 - TARGET) * n + 1e-9)} "
            f"disagreements, today's measure has {t[0, 1] + t[1, 0]} ({t[0, 1]} warnings on "
            f"outputs the reference finds no worse, {t[1, 0]} worse outputs not warned of); "
            "most by output: " + ", ".join(f"{k} {v}" for k, v in top))


def report(kind: str, recs: list[dict], measures: tuple[str, ...] = ("new", "old")) -> None:
    for against in ("input", "either"):
        agree, tables = {}, {}
        for m in measures:
            t, a = confusion(recs, m, against)
            agree[m], tables[m] = a, t
            what = "input" if against == "input" else "input or classical"
            print(f"{kind}, warned (below {what}) "
                  f"x reference worse, {NAMES.get(m, m)} measure: {_counts(t)}; "
                  f"agreement {a:.1%} of {t.sum()}")
        peer = measures[1]
        row(M, f"{kind}: agreement, below {against}", 100 * agree["new"], 100 * agree[peer],
            peer_name=f"{NAMES[peer]} measure", unit="%", better="higher", ratio=False,
            target=f"≥ {TARGET:.0%}", met=agree["new"] >= TARGET,
            note=agreement_note(recs, tables, against))
    for r in recs:
        o, i, c = r["ref"]
        so, si, sc = r["new"]
        if (o < i) != (so < si):
            print(f"  disagrees (vs input): {r['case']} / {r['out']}: reference {o:.2f} vs "
                  f"{i:.2f} dB, measure {so:.2f} vs {si:.2f}")


def colour_report(kind: str, recs: list[dict]) -> None:
    col = [r["colour"] for r in recs if "colour" in r]
    t = np.zeros((2, 2), int)
    for tinted, seen in col:
        t[0 if seen else 1, 0 if tinted else 1] += 1
    print(f"{kind}, grey photos: cast seen x tinted (> {TINT_CAST:.4f}, one 8-bit level, "
          f"against the clean photo): "
          f"seen&tinted {t[0, 0]}, seen&not {t[0, 1]}, unseen&tinted {t[1, 0]}, "
          f"unseen&not {t[1, 1]}; agreement {np.trace(t) / max(t.sum(), 1):.1%} of {t.sum()}")


# --- round 3: the default's margin, on a new held-out set -------------------------------------

#: Noise σ of the new set (the DCPT testbed and the library default use 25/255).
NEW_NOISE = (15 / 255, 35 / 255, 50 / 255)
#: Blurs of the new set: (family, Gaussian σ or disk radius), none used above.
NEW_BLUR = (("blur", 1.2), ("blur", 1.8), ("blur", 3.0),
            ("defocus", 1.5), ("defocus", 2.5), ("defocus", 3.5))
#: Darkenings of the new set (``degrade(..., "low_light", **p)``), none used above: a steep
#: curve with little noise, a linear one with strong read noise, very dark but photon-rich.
NEW_DARK = ({"k": 0.1, "gamma": 2.8, "lam": 600.0, "read_sigma": 0.005},
            {"k": 0.25, "gamma": 1.0, "lam": 200.0, "read_sigma": 0.015},
            {"k": 0.04, "gamma": 1.4, "lam": 2000.0, "read_sigma": 0.003})


def new_photos(side: int) -> dict[str, torch.Tensor]:
    """The round-3 held-out photos, (3, side·3/4, side) in [0, 1]. Colour: scikit-image's
    ``hubble_deep_field`` (centre crop) and ``retina`` (the fundus photo, centre crop), and
    quarter-size crops of photos :func:`photos` used only whole (centre crop): ``china``'s
    top-right quarter, ``flower``'s bottom-left, ``grace_hopper``'s top-left. Grey (three
    equal channels): ``text`` and ``shepp_logan_phantom``."""
    import skimage.data

    def quarter(a, top, left):
        h, w = a.shape[:2]
        return a[(h // 2 if not top else 0):(h // 2 if top else h),
                 (w // 2 if not left else 0):(w // 2 if left else w)]

    china, flower, hopper = _colour_samples()
    raw = {"hubble": skimage.data.hubble_deep_field(), "retina": skimage.data.retina(),
           "china quarter": quarter(china, True, False),
           "flower quarter": quarter(flower, False, True),
           "hopper quarter": quarter(hopper, True, True),
           "text": _grey(skimage.data.text()),
           "phantom": _grey(skimage.data.shepp_logan_phantom())}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def _nlm(c):
    """NL-means at ``h = c`` x the noise level each image's own estimate reads."""
    from skimage.restoration import denoise_nl_means

    from iclr25._guard import noise_sigma

    def f(a):
        s = float(noise_sigma(torch.from_numpy(a).permute(2, 0, 1)[None])[0])
        return denoise_nl_means(a, h=c * s, sigma=s, fast_mode=True, patch_size=5,
                                patch_distance=6, channel_axis=-1)
    return _per_image(f)


def _more_noise(seed, sigma):
    """An output that adds Gaussian noise (``sigma``, a fixed draw of ``seed``) to the input."""
    def more_noise(b):
        n = torch.randn(b.shape, generator=torch.Generator().manual_seed(seed), dtype=b.dtype)
        return (b + sigma * n).clamp(0, 1)
    return more_noise


def _per_image(fn):
    """A restorer of (B, 3, H, W) batches from ``fn`` of one (H, W, 3) float64 array."""
    def run(b: torch.Tensor) -> torch.Tensor:
        outs = [fn(im.detach().cpu().double().permute(1, 2, 0).numpy()) for im in b]
        return torch.from_numpy(np.stack(outs)).permute(0, 3, 1, 2).clamp(0, 1).to(b)
    return run


def new_noise_outputs() -> dict[str, object]:
    """Denoisers judged on the new noise set (each a restorer of a batch, since the
    recorrupted estimate runs it again): NL-means as the library runs it (h = 0.8σ̂) and
    with h = 0.4σ̂ and 1.6σ̂, Gaussian filters of σ 0.7, 1.5 and 3 px, a 3×3 median, TV
    (weights 0.05 and 0.3), NL-means tone-shifted (0.8 · x + 0.1) and the input with more
    noise (σ 0.03, fixed draw)."""
    from scipy.ndimage import gaussian_filter, median_filter
    from skimage.restoration import denoise_tv_chambolle

    nlm, more_noise = _nlm, _more_noise(7, 0.03)

    outs = {"NL-means": nlm(0.8), "NL-means h/2": nlm(0.4), "NL-means 2h": nlm(1.6)}
    outs |= {f"Gaussian {s:g}": _per_image(lambda a, s=s: gaussian_filter(a, (s, s, 0)))
             for s in (0.7, 1.5, 3.0)}
    outs["median 3"] = _per_image(lambda a: median_filter(a, (3, 3, 1)))
    outs |= {f"TV {w:g}": _per_image(lambda a, w=w: denoise_tv_chambolle(
        a, weight=w, channel_axis=-1)) for w in (0.05, 0.3)}
    outs["tone-shifted"] = lambda b: 0.8 * outs["NL-means"](b) + 0.1
    outs["noisier"] = more_noise
    return outs


def new_noise_cases(clean: dict[str, torch.Tensor], seed: int, sigmas=NEW_NOISE,
                    outputs=new_noise_outputs) -> list[dict]:
    """One record per (photo, σ, denoiser): reference PSNRs and the r2r scores, the input
    scored as ``guarded`` scores it (round 3, at f801917: the plain identity; since round
    4 the identity clamped to [0, 1], as every other arm)."""
    recs = []
    for i, (name, J) in enumerate(clean.items()):
        for j, sigma in enumerate(sigmas):
            g = torch.Generator().manual_seed(seed + 10 * i + j)
            y = (J + sigma * torch.randn(J.shape, generator=g, dtype=J.dtype)).clamp(0, 1)
            outs = outputs()
            inp = _Inputs(y[None], None, None)
            cls = outs["NL-means"](y[None])[0]

            def score(f, inp=inp):
                return float(MEASURES["r2r"].score(f(inp.x), f, inp)[0])
            s_in, s_cls = score(lambda b: b.clamp(0, 1)), score(outs["NL-means"])
            for oname, f in outs.items():
                o = f(y[None])[0]
                recs.append({"case": f"{name} noise {sigma * 255:g}/255", "out": oname,
                             "ref": (float(psnr(o, J)), float(psnr(y, J)),
                                     float(psnr(cls, J))),
                             "new": (score(f), s_in, s_cls)})
    return recs


def new_blur_outputs(y: torch.Tensor, fam: str, width: float) -> dict[str, torch.Tensor]:
    """Deblurred outputs judged on the new blur set: Richardson-Lucy with the true kernel and
    with 0.6× and 1.6× its width, Wiener with the true kernel (balance 0.05), unsharp
    masking (radius 2, amounts 0.5 and 1.5), the true-kernel RL tone-shifted
    (0.85 · x + 0.1) and with noise added (σ 0.02, fixed draw), and the input blurred
    further (Gaussian σ 0.7)."""
    from skimage.filters import unsharp_mask
    from skimage.restoration import wiener

    from iclr25._guard import disk_psf

    mk = gaussian_psf if fam == "blur" else disk_psf
    good = _rl(y, mk(width))
    a = y.permute(1, 2, 0).numpy()
    # unsharp_mask's channel_axis=2, not -1: scikit-image 0.26 slices channel -1 along the
    # first axis and leaves the rest of its output uninitialised (h68post9)
    psf = mk(width)
    wien = np.stack([wiener(a[..., c], psf, balance=0.05) for c in range(3)], -1)
    n = torch.randn(y.shape, generator=torch.Generator().manual_seed(11), dtype=y.dtype)
    return {"RL true": good, "RL 0.6x": _rl(y, mk(0.6 * width)),
            "RL 1.6x": _rl(y, mk(1.6 * width)),
            "Wiener": torch.from_numpy(wien).permute(2, 0, 1).clamp(0, 1),
            **{f"unsharp {am:g}": torch.from_numpy(unsharp_mask(
                a, radius=2, amount=am, channel_axis=2)).permute(2, 0, 1).clamp(0, 1)
               for am in (0.5, 1.5)},
            "tone-shifted": (0.85 * good + 0.1).clamp(0, 1),
            "noisy": (good + 0.02 * n).clamp(0, 1),
            "blurred further": reblur(y[None], torch.from_numpy(gaussian_psf(0.7)))[0]}


def new_blur_cases(clean: dict[str, torch.Tensor], blurs=NEW_BLUR) -> list[dict]:
    """One record per (photo, blur of ``blurs``, output): reference PSNRs and the re-blur
    scores."""
    from iclr25._guard import disk_psf

    recs = []
    for name, J in clean.items():
        for fam, width in blurs:
            k = gaussian_psf(width) if fam == "blur" else disk_psf(width)
            y = reblur(J[None], torch.from_numpy(k))[0].clamp(0, 1)
            cls = _classical(y[None], fam)[0].double()
            inp = _Inputs(y[None], None, fam)

            spec = MEASURES[choose_measure(None, fam)]

            def score(o, f, inp=inp, m=spec):
                return float(m.score(o[None], f, inp)[0])
            # the outputs' restorers (h68redeg: blur's measure re-runs them), the input's and
            # the classical one
            from dcpt_redegrade import blur_restorers

            arms = (lambda b: b.clamp(0, 1), lambda b, fam=fam: _classical(b, fam).to(b))
            for (oname, o), f in zip(new_blur_outputs(y, fam, width).items(),
                                     blur_restorers(fam, width).values(), strict=True):
                recs.append(_record(f"{name} {fam} {width:g}", oname, J, y, cls, o,
                                    {"new": score}, higher=True, restorers=(f, *arms)))
                if getattr(spec, "also", None) is not None:   # h68blur11: a second score
                    name2, s2, m2 = spec.also
                    a_o, a_y = (float(s2(v[None], r, inp)[0]) for v, r in ((o, f), (y, arms[0])))
                    if not a_o >= a_y + m2:   # kept by neither margin, as ``guarded``
                        recs[-1]["why"] = f"below the input + {m2:g} by the {name2}"
    return recs


def new_lowlight_outputs(y: torch.Tensor, d: int) -> dict[str, torch.Tensor]:
    """Outputs judged on the new low-light set: the classical three, gamma curves to means
    0.4 and 0.6, a linear gain to mean 0.6 (clipped), a warm tint (× (1.08, 1, 0.92)),
    added noise (σ 0.03) and flattening (0.6 · x + 0.2) of the gamma result; the network
    is added by :func:`lowlight_cases`."""
    from iclr25.lowlight.baselines import gamma_to_mean

    g = gamma_to_mean(y)
    return {k: f(y) for k, f in LL_CLASSICAL.items()} | {
        **{f"gamma to {t:g}": gamma_to_mean(y, target=t) for t in (0.4, 0.6)},
        "gain to 0.6": _gain(y, 0.6),
        "warm": (g * torch.tensor([1.08, 1.0, 0.92], dtype=g.dtype)[:, None, None]
                 ).clamp(0, 1),
        "noisier": _noisy(g, 0.03, 200 + d),
        "flattened": 0.6 * g + 0.2}


def margin_report(kind: str, recs: list[dict], margin: float, unjudged: bool = True) -> None:
    """The check against the reference at margin 0 and at the default ``margin``, and how
    many outputs the default returns that are worse than the input. ``unjudged``: an input
    the measure cannot judge (``r["why"]``, low light since round 6) keeps the input, as
    ``guarded`` does; False: the rule before round 6."""
    for m in dict.fromkeys((0.0, margin)):   # once where the default is 0
        t = np.zeros((2, 2), int)
        for r in recs:
            o, i, _ = r["ref"]
            so, si, _ = r["new"]
            # NaN: not kept (guarded's rule); an unjudged input: not kept
            kept = so >= si + m and not (unjudged and r.get("why"))
            t[1 if kept else 0, 1 if o >= i else 0] += 1
        a = float(np.trace(t) / t.sum())
        print(f"{kind}, margin {m:g}: warned&worse {t[0, 0]}, warned&better {t[0, 1]}, "
              f"quiet&worse {t[1, 0]}, quiet&better {t[1, 1]}; agreement {a:.1%} of "
              f"{t.sum()}; outputs returned worse than the input {t[1, 0]} "
              f"({t[1, 0] / t.sum():.1%})")
        row(M, f"{kind}: agreement, margin {m:g}", 100 * a, None, peer_name="",
            unit="%", better="higher", target=f"≥ {TARGET:.0%}", met=a >= TARGET, ratio=False,
            note=f"{t.sum()} outputs; {t[1, 0]} returned worse than the input")
    for r in recs:
        o, i, _ = r["ref"]
        so, si, _ = r["new"]
        if so >= si + margin and o < i and not (unjudged and r.get("why")):
            print(f"  returned worse: {r['case']} / {r['out']}: reference {o:.2f} vs "
                  f"{i:.2f} dB, measure {so:.2f} vs {si:.2f}")


def blur_margin_report(label: str, recs: list[dict]) -> None:
    """:func:`margin_report` of the blur and the defocus records of ``recs``, each at the
    default margin of the measure the library picks for it (``choose_measure``)."""
    from iclr25._guard import MARGINS

    for fam in ("blur", "defocus"):
        margin_report(f"{fam}, {label}", [r for r in recs if f" {fam} " in r["case"]],
                      MARGINS[choose_measure(None, fam)])


def run_new(side: int, steps: int, seed: int) -> None:
    """Round 3: the new held-out set (:func:`new_photos`), each kind at margin 0 and at the
    default margin."""
    from iclr25._guard import MARGINS

    clean = new_photos(side)
    margin_report("noise, new set", new_noise_cases(clean, seed), MARGINS["r2r"])
    blur = new_blur_cases(clean)
    blur_margin_report("new set", blur)
    recs = lowlight_cases(clean, steps, seed, dark_params=NEW_DARK,
                          outputs=new_lowlight_outputs)
    margin_report("low light, new set", recs, MARGINS["exposure"])
    colour_report("low light, new set", recs)


# --- round 4: the noise measure's two fixes, on another new set -------------------------------

#: Noise σ of round 4 (none used before: 25/255 the testbed's, 15, 35, 50 round 3's).
ROUND4_NOISE = (20 / 255, 30 / 255, 45 / 255)


def round4_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 4's held-out photos (issue 68; written down and committed before the fixed
    recorrupted estimate ran on them): crops used nowhere before: ``china``'s bottom-left
    quarter, ``flower``'s top-right, ``grace_hopper``'s bottom-right, ``hubble_deep_field``'s
    top-left, ``retina``'s centre half; scikit-image's ``colorwheel`` and ``horse`` (grey),
    used by no testbed, test or earlier set."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image
    from sklearn.datasets import load_sample_images

    china, flower = load_sample_images().images
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        hopper = np.asarray(Image.open(f).convert("RGB"))
    horse = (~skimage.data.horse()).astype(np.uint8) * 255
    raw = {"china bottom-left": _part(china, (0.5, 1), (0, 0.5)),
           "flower top-right": _part(flower, (0, 0.5), (0.5, 1)),
           "hopper bottom-right": _part(hopper, (0.5, 1), (0.5, 1)),
           "hubble top-left": _part(skimage.data.hubble_deep_field(), (0, 0.5), (0, 0.5)),
           "retina centre": _part(skimage.data.retina(), (0.25, 0.75), (0.25, 0.75)),
           "colorwheel": skimage.data.colorwheel(),
           "horse": np.repeat(horse[..., None], 3, -1)}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def round4_noise_outputs() -> dict[str, object]:
    """Denoisers judged in round 4 (settings not used before): NL-means with h = 0.8σ̂ (the
    library's; the classical result), 0.6σ̂ and 1.2σ̂, Gaussian filters of σ 1 and 2 px, a
    5×5 median, TV (weight 0.1), a bilateral filter (σ_colour 0.1, σ_space 1.5), NL-means
    tone-shifted (0.9 · x + 0.05) and the input with more noise (σ 0.02, fixed draw)."""
    from scipy.ndimage import gaussian_filter, median_filter
    from skimage.restoration import denoise_bilateral, denoise_tv_chambolle

    base = new_noise_outputs()

    nlm, more_noise = _nlm, _more_noise(13, 0.02)

    outs = {"NL-means": base["NL-means"], "NL-means 0.6h": nlm(0.6), "NL-means 1.2h": nlm(1.2)}
    outs |= {f"Gaussian {s:g}": _per_image(lambda a, s=s: gaussian_filter(a, (s, s, 0)))
             for s in (1.0, 2.0)}
    outs["median 5"] = _per_image(lambda a: median_filter(a, (5, 5, 1)))
    outs["TV 0.1"] = _per_image(lambda a: denoise_tv_chambolle(a, weight=0.1,
                                                               channel_axis=-1))
    outs["bilateral"] = _per_image(lambda a: denoise_bilateral(
        np.clip(a, 0, 1), sigma_color=0.1, sigma_spatial=1.5, channel_axis=-1))
    outs["tone-shifted"] = lambda b: (0.9 * outs["NL-means"](b) + 0.05).clamp(0, 1)
    outs["noisier"] = more_noise
    return outs


def run_round4(side: int, seed: int) -> None:
    """Round 4: the fixed recorrupted estimate (input arm clamped; a non-positive MSE
    unreadable) on :func:`round4_photos` at :data:`ROUND4_NOISE`, at margin 0 and 1 dB."""
    from iclr25._guard import MARGINS

    recs = new_noise_cases(round4_photos(side), seed + 1000, ROUND4_NOISE,
                           round4_noise_outputs)
    margin_report("noise, round 4", recs, MARGINS["r2r"])


# --- round 5: the re-blur measure's two fixes, on another new set -----------------------------

#: Blur widths of round 5 (none used before: Gaussian σ 1.5/2/2.5 and 1.2/1.8/3, disk radius
#: 2/3/4 and 1.5/2.5/3.5 earlier); the disk of radius 1.2 is the narrow defocus whose
#: estimated disk fell below 1 px in round 3.
ROUND5_BLUR = (("blur", 1.0), ("blur", 1.4), ("blur", 2.2),
               ("defocus", 1.2), ("defocus", 1.8), ("defocus", 2.8))


def round5_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 5's held-out photos (issue 68; written down and committed before the fixed
    re-blur measure ran on them): images and crops used by no earlier set of this
    benchmark: scikit-image's ``immunohistochemistry`` (centre) and ``logo`` (composited on
    white), ``china``'s top-left quarter, ``flower``'s bottom-right, ``grace_hopper``'s
    bottom-left, ``hubble_deep_field``'s bottom-right (a star field) and ``page``'s left
    half (grey text, three equal channels)."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image
    from sklearn.datasets import load_sample_images

    china, flower = load_sample_images().images
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        hopper = np.asarray(Image.open(f).convert("RGB"))
    rgba = skimage.data.logo().astype(np.float64) / 255
    logo = rgba[..., :3] * rgba[..., 3:] + (1 - rgba[..., 3:])
    raw = {"immunohistochemistry": skimage.data.immunohistochemistry(),
           "logo": (logo * 255 + 0.5).astype(np.uint8),
           "china top-left": _part(china, (0, 0.5), (0, 0.5)),
           "flower bottom-right": _part(flower, (0.5, 1), (0.5, 1)),
           "hopper bottom-left": _part(hopper, (0.5, 1), (0, 0.5)),
           "hubble bottom-right": _part(skimage.data.hubble_deep_field(), (0.5, 1), (0.5, 1)),
           "page left": np.repeat(_part(skimage.data.page(), (0, 1), (0, 0.5))[..., None], 3,
                                  -1)}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round5(side: int) -> None:
    """Round 5: the re-blur measure (width estimate of any edge shape; a disk never the
    identity) on :func:`round5_photos` at :data:`ROUND5_BLUR` with :func:`new_blur_outputs`,
    at margin 0 and at each measure's default margin (:data:`iclr25._guard.MARGINS`: 1 dB
    when it ran; blur 5 dB and defocus 1.5 dB since h68dm10)."""

    blur = new_blur_cases(round5_photos(side), ROUND5_BLUR)
    blur_margin_report("round 5", blur)


def run_round3_blur(side: int) -> None:
    """Round 3's blur and defocus cases alone (no longer held out: round 5 is)."""

    blur = new_blur_cases(new_photos(side))
    blur_margin_report("new set", blur)


# --- round 6: the re-blur width read from steps (h68blur2), on another new set --------------

#: Blur widths of round 6 (none used before: Gaussian σ 1.5/2/2.5, 1.2/1.8/3 and 1.0/1.4/2.2,
#: disk radius 2/3/4, 1.5/2.5/3.5 and 1.2/1.8/2.8 earlier).
ROUND6_BLUR = (("blur", 1.1), ("blur", 1.6), ("blur", 2.7),
               ("defocus", 1.4), ("defocus", 2.2), ("defocus", 3.2))


def round6_blur_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 6's held-out photos (issue 68, h68blur2; written down and committed before the
    step-read width ran on them): images and crops used by no earlier set of this
    benchmark, by a test or by NIQE's pristine model: scikit-image's ``checkerboard``
    (grey), matplotlib's ``logo2.png`` (composited on white), ``china``'s bottom-right
    quarter, ``flower``'s top-left, ``grace_hopper``'s top-right, ``hubble_deep_field``'s
    top-right (a star field) and ``page``'s right half (grey text, three equal channels)."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image
    from sklearn.datasets import load_sample_images

    def grey(a):
        return np.repeat(np.asarray(a, dtype=np.uint8)[..., None], 3, -1)

    china, flower = load_sample_images().images
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        hopper = np.asarray(Image.open(f).convert("RGB"))
    with cbook.get_sample_data("logo2.png") as f:
        rgba = np.asarray(Image.open(f).convert("RGBA"), dtype=np.float64) / 255
    logo = rgba[..., :3] * rgba[..., 3:] + (1 - rgba[..., 3:])
    raw = {"checkerboard": grey(skimage.data.checkerboard()),
           "matplotlib logo": (logo * 255 + 0.5).astype(np.uint8),
           "china bottom-right": _part(china, (0.5, 1), (0.5, 1)),
           "flower top-left": _part(flower, (0, 0.5), (0, 0.5)),
           "hopper top-right": _part(hopper, (0, 0.5), (0.5, 1)),
           "hubble top-right": _part(skimage.data.hubble_deep_field(), (0, 0.5), (0.5, 1)),
           "page right": grey(_part(skimage.data.page(), (0, 1), (0.5, 1)))}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round6_blur(side: int) -> None:
    """Round 6: the re-blur measure (the library's, whichever ``iclr25`` is imported) on
    :func:`round6_blur_photos` at :data:`ROUND6_BLUR` with :func:`new_blur_outputs`, at margin 0
    and at each measure's default margin (:data:`iclr25._guard.MARGINS`: 1 dB when it ran;
    blur 5 dB and defocus 1.5 dB since h68dm10)."""

    blur = new_blur_cases(round6_blur_photos(side), ROUND6_BLUR)
    blur_margin_report("round 6", blur)


# --- round 6: the low-light rule for scenes meant to be dark, on another new set -------------

#: Darkenings of round 6 (``degrade(..., "low_light", **p)``), none used before.
ROUND6_DARK = ({"k": 0.06, "gamma": 2.0, "lam": 500.0, "read_sigma": 0.008},
               {"k": 0.18, "gamma": 1.2, "lam": 400.0, "read_sigma": 0.012},
               {"k": 0.12, "gamma": 1.7, "lam": 1000.0, "read_sigma": 0.004})


def _generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 6's generated scenes, (h, w, 3) uint8, seeded: ``"stars"`` (a night sky:
    300 Gaussian stars of random colour and brightness on a sky at 0.02), ``"night
    street"`` (a dark blue-grey street at 0.03-0.08 with 14 lit windows and 4 lamps),
    ``"blobs"`` (grey: scikit-image's ``binary_blobs``, 25% white on black, softened by a
    Gaussian of 1 px) and ``"daylight"`` (a sky gradient 0.55-0.85 over a textured green
    and brown ground at 0.2-0.5)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"stars": 61, "night street": 62, "blobs": 63,
                                 "daylight": 64}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    if name == "stars":
        img = np.full((h, w, 3), 0.02)
        for _ in range(300):
            cy, cx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(0.6, 2.0)
            g = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
            img += g[..., None] * rng.uniform(0.2, 1.0) * rng.uniform(0.7, 1.0, 3)
    elif name == "night street":
        img = (0.03 + 0.05 * yy / h)[..., None] * np.array([0.8, 0.9, 1.2])
        img = img + 0.01 * gaussian_filter(rng.standard_normal((h, w, 3)), (2, 2, 0))
        for _ in range(14):
            y0, x0 = rng.integers(0, h * 2 // 3), rng.integers(0, w - w // 12)
            img[y0:y0 + h // 16, x0:x0 + w // 20] = rng.uniform(0.6, 0.95) * np.array(
                [1.0, 0.85, 0.55])
        for _ in range(4):
            cy, cx = rng.uniform(0.2 * h, 0.6 * h), rng.uniform(0, w)
            g = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * (w / 25) ** 2))
            img += g[..., None] * np.array([1.0, 0.8, 0.5])
    elif name == "blobs":
        from skimage.data import binary_blobs
        b = binary_blobs(max(h, w), blob_size_fraction=0.08, volume_fraction=0.25,
                         rng=63)[:h, :w].astype(float)
        img = np.repeat(gaussian_filter(b, 1.0)[..., None], 3, -1)
    else:
        sky = (0.85 - 0.3 * yy / h)[..., None] * np.array([0.75, 0.85, 1.0])
        tex = gaussian_filter(rng.standard_normal((h, w)), 3) * 0.6
        ground = (0.35 + 0.15 * tex)[..., None] * np.array([0.7, 1.0, 0.5])
        ground[:, w // 2:] *= np.array([1.3, 0.9, 0.7])
        img = np.where((yy < 0.45 * h + 0.05 * h * np.sin(xx / w * 6))[..., None], sky,
                       ground)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round6_dark_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 6's held-out photos (issue 68; written down and committed before the low-light
    rule, ``iclr25._guard.not_underexposed``, ran on them), (3, side·3/4, side) in [0, 1]:
    scikit-image's ``immunohistochemistry`` (used by no set, testbed or test), crops used
    nowhere before (``china``'s bottom-right quarter, ``grace_hopper``'s bottom-left,
    ``hubble_deep_field``'s bottom-right) and four generated scenes (:func:`_generated`:
    two meant to be dark, a night sky and a night street; white blobs on black; a
    daylight scene)."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image
    from sklearn.datasets import load_sample_images

    china, _ = load_sample_images().images
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        hopper = np.asarray(Image.open(f).convert("RGB"))
    raw = {"ihc": skimage.data.immunohistochemistry(),
           "china bottom-right": _part(china, (0.5, 1), (0.5, 1)),
           "hopper bottom-left": _part(hopper, (0.5, 1), (0, 0.5)),
           "hubble bottom-right": _part(skimage.data.hubble_deep_field(), (0.5, 1), (0.5, 1))}
    raw |= {n: _generated(n, 300, 400) for n in ("stars", "night street", "blobs",
                                                 "daylight")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def round6_lowlight_outputs(y: torch.Tensor, d: int) -> dict[str, torch.Tensor]:
    """Outputs judged in round 6 (settings not used before): the classical three, gamma
    curves to means 0.2, 0.35 and 0.55, a linear gain to mean 0.45 (clipped), a magenta
    tint (× (1.05, 0.95, 1.05)), added noise (σ 0.04) and flattening (0.7 · x + 0.15) of
    the gamma result; the network is added by :func:`lowlight_cases`."""
    from iclr25.lowlight.baselines import gamma_to_mean

    g = gamma_to_mean(y)
    return {k: f(y) for k, f in LL_CLASSICAL.items()} | {
        **{f"gamma to {t:g}": gamma_to_mean(y, target=t) for t in (0.2, 0.35, 0.55)},
        "gain to 0.45": _gain(y, 0.45),
        "magenta": (g * torch.tensor([1.05, 0.95, 1.05], dtype=g.dtype)[:, None, None]
                    ).clamp(0, 1),
        "noisier": _noisy(g, 0.04, 600 + d),
        "flattened": 0.7 * g + 0.15}


def run_round6_lowlight(side: int, steps: int, seed: int) -> None:
    """Round 6: low light on :func:`round6_dark_photos` at :data:`ROUND6_DARK`, by the rule
    before round 6 (the exposure measure on every input) and today's (an input that
    ``not_underexposed`` names keeps the input), at margin 0 and at the default margin."""
    from iclr25._guard import MARGINS

    recs = lowlight_cases(round6_dark_photos(side), steps, seed + 2000, dark_params=ROUND6_DARK,
                          outputs=round6_lowlight_outputs)
    margin_report("low light, round 6, rule before round 6", recs, MARGINS["exposure"],
                  unjudged=False)
    margin_report("low light, round 6", recs, MARGINS["exposure"])
    for name in dict.fromkeys(r["case"] for r in recs):
        r = next(r for r in recs if r["case"] == name)
        print(f"  {name}: {r['why'] or 'judged'}")
    colour_report("low light, round 6", recs)


# --- round 7, defocus: the posterior PSNR (h68defocus), on another new set ------------------

#: Defocus radii of round 7 (none used before: 2/3/4, 1.5/2.5/3.5, 1.2/1.8/2.8, 1.4/2.2/3.2).
ROUND7_DEFOCUS = (("defocus", 1.3), ("defocus", 2.4), ("defocus", 3.6))


def round7_defocus_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 7's generated scenes, (h, w, 3) uint8, seeded: ``"dead leaves"`` (1,500
    occluding discs of random colour, radii from a power law r^-3 in 2-60 px: the classic
    model of natural images' statistics), ``"rendered text"`` (grey: lines of words
    rendered by matplotlib at 7-14 pt), ``"shapes"`` (40 ellipses and rectangles of flat
    colour over a colour gradient), ``"terrain"`` (grey-green shaded relief of 1/f^3.2
    fractal noise) and ``"zone plate"`` (grey: cos(π f r²/R), local frequency rising to
    0.35 cycles/px at the corner)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"dead leaves": 71, "rendered text": 72, "shapes": 73,
                                 "terrain": 74, "zone plate": 75}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    if name == "dead leaves":
        img = np.zeros((h, w, 3))
        u = rng.uniform(size=1500)
        radii = 1 / np.sqrt(u / 2 ** 2 + (1 - u) / 60 ** 2)     # density ∝ r^-3 on [2, 60]
        for r in radii:
            cy, cx = rng.uniform(-20, h + 20), rng.uniform(-20, w + 20)
            img[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = rng.uniform(0.05, 0.95, 3)
    elif name == "rendered text":
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(w / 100, h / 100), dpi=100, facecolor="white")
        words = ["".join(chr(97 + int(c)) for c in rng.integers(0, 26, rng.integers(2, 9)))
                 for _ in range(120)]
        for i in range(12):
            fig.text(0.02, 0.95 - i * 0.08, " ".join(words[10 * i:10 * i + 10]),
                     fontsize=float(rng.uniform(7, 14)), va="top", color="black")
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        img = np.asarray(canvas.buffer_rgba(), dtype=np.float64)[:h, :w, :3] / 255
    elif name == "shapes":
        img = (0.3 + 0.4 * xx / w)[..., None] * np.array([1.0, 0.8, 0.6]) + (
            0.2 * yy / h)[..., None] * np.array([0.0, 0.3, 0.6])
        for _ in range(40):
            cy, cx = rng.uniform(0, h), rng.uniform(0, w)
            ay, ax = rng.uniform(5, h / 5), rng.uniform(5, w / 5)
            if rng.uniform() < 0.5:
                inside = ((yy - cy) / ay) ** 2 + ((xx - cx) / ax) ** 2 <= 1
            else:
                inside = (np.abs(yy - cy) <= ay) & (np.abs(xx - cx) <= ax)
            img[inside] = rng.uniform(0, 1, 3)
    elif name == "terrain":
        from matplotlib import colormaps
        from matplotlib.colors import LightSource

        f = np.sqrt(np.fft.fftfreq(h)[:, None] ** 2 + np.fft.fftfreq(w)[None] ** 2)
        f[0, 0] = 1.0
        z = np.fft.ifft2(np.fft.fft2(rng.standard_normal((h, w))) * f ** -1.6).real
        img = LightSource(azdeg=300, altdeg=40).shade(
            gaussian_filter(z, 0.5), cmap=colormaps["YlGn"], blend_mode="soft",
            vert_exag=50)[..., :3]
    else:
        r2 = (yy - h / 2) ** 2 + (xx - w / 2) ** 2
        R = math.sqrt((h / 2) ** 2 + (w / 2) ** 2)
        img = np.repeat((0.5 + 0.4 * np.cos(np.pi * 0.35 * r2 / R))[..., None], 3, -1)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round7_defocus_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 7's held-out photos (issue 68, h68defocus; written down and committed after the
    posterior rule and before it ran on them), (3, side·3/4, side) in [0, 1]: images used
    by no earlier set of this benchmark, testbed, test or NIQE's pristine model:
    ``hubble_deep_field``'s bottom-left quarter (its one quarter not used before), a 3 × 4
    montage of ``lfw_subset``'s faces 12-23 (grey; the fresh set used faces 0-11) and five
    generated scenes (:func:`round7_defocus_generated`; the zone plate generated at the
    final size, so that no resizing aliases it)."""
    import skimage.data

    faces = skimage.data.lfw_subset()[12:24]
    montage = np.block([[faces[4 * r + c] for c in range(4)] for r in range(3)])
    montage = (montage - montage.min()) / (montage.max() - montage.min())
    raw = {"hubble bottom-left": _part(skimage.data.hubble_deep_field(), (0.5, 1), (0, 0.5)),
           "faces 12-23": np.repeat((montage * 255 + 0.5).astype(np.uint8)[..., None], 3, -1)}
    raw |= {n: round7_defocus_generated(n, 300, 400) for n in ("dead leaves",
                                                               "rendered text", "shapes",
                                                               "terrain")}
    raw["zone plate"] = round7_defocus_generated("zone plate", side * 3 // 4, side)
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round7_defocus(side: int) -> None:
    """Round 7, defocus: the library's defocus measure (whichever ``iclr25`` is imported:
    since h68defocus the posterior PSNR, default margin 0; before, the re-blur PSNR, 1 dB)
    on :func:`round7_defocus_photos` at :data:`ROUND7_DEFOCUS` with
    :func:`new_blur_outputs`, at margins 0 and 1 dB (each measure's default when it ran;
    the posterior PSNR's is 1.5 dB since h68dm10, which ``--set defaults-sweep`` reports)."""
    from iclr25._guard import MARGINS

    recs = new_blur_cases(round7_defocus_photos(side), ROUND7_DEFOCUS)
    m = choose_measure(None, "defocus")
    print(f"round 7 defocus measure: {m} (default margin {MARGINS[m]:g})")
    margin_report("defocus, round 7", recs, 1.0)
# --- round 7: low light's scene-specific ideal tones, on another new set ---------------------

#: Darkenings of round 7 (``degrade(..., "low_light", **p)``), none used before: steep and
#: dark with little noise, mild but noisy, very dark and almost linear.
ROUND7_DARK = ({"k": 0.07, "gamma": 2.4, "lam": 700.0, "read_sigma": 0.006},
               {"k": 0.35, "gamma": 1.6, "lam": 250.0, "read_sigma": 0.01},
               {"k": 0.045, "gamma": 1.1, "lam": 1500.0, "read_sigma": 0.005})


def _round7_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 7's generated scenes, (h, w, 3) uint8, seeded (none like an earlier one):
    ``"room"`` (typical: walls at 0.35-0.55, a window at 0.9, a table and shelves),
    ``"market"`` (typical: 40 textured stalls of random colour at 0.15-0.75 under a grey
    sky), ``"moonlit"`` (dark by design: a blue-black landscape at 0.01-0.05, a moon at
    0.95 and three lit windows), ``"snow"`` (bright by design: snow at 0.82-0.95, a pale
    sky, six dark trees) and ``"sketch"`` (bright by design, grey: paper at 0.93 with 25
    thin pencil strokes at 0.2-0.5)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"room": 71, "market": 72, "moonlit": 73, "snow": 74,
                                 "sketch": 75}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    tex = gaussian_filter(rng.standard_normal((h, w)), 2)
    if name == "room":
        img = (0.45 + 0.1 * xx / w)[..., None] * np.array([1.0, 0.95, 0.85]) \
            + 0.05 * tex[..., None]
        img[h // 6:h // 2, w // 8:w * 3 // 8] = np.array([0.9, 0.92, 0.95])
        img[h * 2 // 3:, w // 3:w * 5 // 6] = np.array([0.35, 0.22, 0.12])
        for r in range(3):
            img[h // 8 + r * h // 6:h // 8 + r * h // 6 + h // 40, w * 5 // 8:w * 15 // 16] = \
                np.array([0.25, 0.18, 0.1])
    elif name == "market":
        img = np.repeat((0.6 + 0.05 * tex)[..., None], 3, -1)
        for _ in range(40):
            y0, x0 = rng.integers(h // 4, h - h // 8), rng.integers(0, w - w // 8)
            img[y0:y0 + h // 8, x0:x0 + w // 8] = rng.uniform(0.15, 0.75, 3) * (
                1 + 0.2 * tex[y0:y0 + h // 8, x0:x0 + w // 8, None])
    elif name == "moonlit":
        img = (0.01 + 0.04 * (yy > 0.6 * h) * (1 + tex))[..., None] * np.array(
            [0.6, 0.8, 1.3])
        g = np.exp(-((yy - 0.2 * h) ** 2 + (xx - 0.7 * w) ** 2) / (2 * (w / 30) ** 2))
        img += (g > 0.5)[..., None] * 0.95
        for _ in range(3):
            y0, x0 = rng.integers(int(0.65 * h), h - h // 20), rng.integers(0, w - w // 30)
            img[y0:y0 + h // 30, x0:x0 + w // 40] = np.array([0.9, 0.75, 0.4])
    elif name == "snow":
        img = np.where((yy < 0.35 * h)[..., None], np.array([0.8, 0.85, 0.93]),
                       (0.88 + 0.04 * tex)[..., None] * np.ones(3))
        for _ in range(6):
            x0, top = rng.integers(0, w - w // 20), rng.uniform(0.2, 0.4) * h
            trunk = (np.abs(xx - x0) < (yy - top) * 0.25) & (yy > top) & (yy < 0.8 * h)
            img[trunk] = np.array([0.1, 0.2, 0.12])
    else:
        img = np.full((h, w), 0.93) + 0.01 * tex
        for _ in range(25):
            y0, x0 = rng.uniform(0, h), rng.uniform(0, w)
            ang, ln = rng.uniform(0, np.pi), rng.uniform(0.1, 0.4) * w
            d = np.abs((yy - y0) * np.cos(ang) - (xx - x0) * np.sin(ang))
            along = np.abs((yy - y0) * np.sin(ang) + (xx - x0) * np.cos(ang))
            img = np.where((d < 1.0) & (along < ln / 2), rng.uniform(0.2, 0.5), img)
        img = np.repeat(img[..., None], 3, -1)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round7_lowlight_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 7's held-out photos (issue 68; written down and committed before the
    scene-specific ideal, ``iclr25._guard.ideal_tones``, ran on them), (3, side·3/4, side)
    in [0, 1]: 12 images, none used by an earlier set, a testbed, a test or NIQE's
    pristine model, in the proportion 2/3 typical (8), 1/6 dark by design (2), 1/6 bright
    by design (2):

    * typical: the centre halves of ``china``, ``flower`` and ``grace_hopper`` (colour;
      earlier sets used them whole or by quarters), ``china``'s middle band (rows 1/3 to
      2/3, BT.601 grey), two 3 × 4 montages of scikit-image's ``lfw_subset`` non-face
      patches (grey; 100-111 and 112-123; earlier sets used faces 0-11) and two generated
      scenes (:func:`_round7_generated`: a room, a market);
    * dark by design: ``hubble_deep_field``'s bottom-left quarter (a star field) and a
      generated moonlit landscape;
    * bright by design: a generated snow field and a generated pencil sketch (grey).

    Grey photos (three equal channels, for the tint check): the middle band, both
    montages and the sketch."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image
    from sklearn.datasets import load_sample_images

    def grey(a):
        a = np.asarray(a, dtype=np.float64)
        if a.ndim == 3:
            a = a @ np.array([0.299, 0.587, 0.114])
        a = (a - a.min()) / (a.max() - a.min())
        return np.repeat((a * 255 + 0.5).astype(np.uint8)[..., None], 3, -1)

    china, flower = load_sample_images().images
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        hopper = np.asarray(Image.open(f).convert("RGB"))
    patches = skimage.data.lfw_subset()[100:]

    def montage(i):
        return grey(np.block([[patches[i + 4 * r + c] for c in range(4)] for r in range(3)]))

    centre = ((0.25, 0.75), (0.25, 0.75))
    raw = {"china centre": _part(china, *centre), "flower centre": _part(flower, *centre),
           "hopper centre": _part(hopper, *centre),
           "china band grey": grey(_part(china, (1 / 3, 2 / 3), (0, 1))),
           "patches 100-111": montage(0), "patches 112-123": montage(12)}
    raw |= {n: _round7_generated(n, 300, 400) for n in ("room", "market")}
    raw["hubble bottom-left"] = _part(skimage.data.hubble_deep_field(), (0.5, 1), (0, 0.5))
    raw |= {n: _round7_generated(n, 300, 400) for n in ("moonlit", "snow", "sketch")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def round7_lowlight_outputs(y: torch.Tensor, d: int) -> dict[str, torch.Tensor]:
    """Outputs judged in round 7 (settings not used before): the classical three, gamma
    curves to means 0.25, 0.45 and 0.65, linear gains to means 0.35 and 0.7 (clipped), a
    green tint (× (0.95, 1.05, 0.95)), added noise (σ 0.06) and flattening (0.8 · x + 0.1)
    of the gamma result; the network is added by :func:`lowlight_cases`."""
    from iclr25.lowlight.baselines import gamma_to_mean

    g = gamma_to_mean(y)
    return {k: f(y) for k, f in LL_CLASSICAL.items()} | {
        **{f"gamma to {t:g}": gamma_to_mean(y, target=t) for t in (0.25, 0.45, 0.65)},
        **{f"gain to {t:g}": _gain(y, t) for t in (0.35, 0.7)},
        "green": (g * torch.tensor([0.95, 1.05, 0.95], dtype=g.dtype)[:, None, None]
                  ).clamp(0, 1),
        "noisier": _noisy(g, 0.06, 700 + d),
        "flattened": 0.8 * g + 0.1}


def fallback_report(kind: str, recs: list[dict]) -> None:
    """``fallback="classical"`` on the network's outputs: how often the measure switches to
    the classical result (the best classical scores above ours) and how many of those
    switches the reference finds worse than the network's output."""
    net = [r for r in recs if r["out"] == "network"]
    switched = [r for r in net if r["new"][2] > r["new"][0]]
    worse = [r for r in switched if r["ref_cls"]["new"] < r["ref"][0]]
    print(f"{kind}, fallback='classical' on the network's {len(net)} outputs: switched "
          f"{len(switched)}, to a classical result worse than ours by the reference "
          f"{len(worse)}")


def run_round7_lowlight(side: int, steps: int, seed: int) -> None:
    """Round 7: low light on :func:`round7_lowlight_photos` at :data:`ROUND7_DARK` with
    :func:`round7_lowlight_outputs`, by the measure of the ``iclr25`` imported (run once
    with the branch's, once with main's: ``PYTHONPATH``), at margin 0 and at the default
    margin; the tint check on grey photos; ``fallback="classical"``'s switches."""
    from iclr25._guard import MARGINS

    recs = lowlight_cases(round7_lowlight_photos(side), steps, seed + 3000,
                          dark_params=ROUND7_DARK, outputs=round7_lowlight_outputs)
    margin_report("low light, round 7", recs, MARGINS["exposure"])
    colour_report("low light, round 7", recs)
    fallback_report("low light, round 7", recs)



# --- round 8: low light's noise-floor rule (h68ll8), on another new set -----------------------

#: Darkenings of round 8 (``degrade(..., "low_light", **p)``), none used before (nor the
#: issue-68 walk's 0.25·x^1.8 + noise): moderate, dim and flat with more read noise, bright
#: but steep and photon-starved.
ROUND8_DARK = ({"k": 0.15, "gamma": 2.0, "lam": 800.0, "read_sigma": 0.007},
               {"k": 0.08, "gamma": 1.3, "lam": 400.0, "read_sigma": 0.012},
               {"k": 0.3, "gamma": 2.2, "lam": 120.0, "read_sigma": 0.015})


def round8_lowlight_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 8's generated scenes, (h, w, 3) uint8, seeded (none like an earlier one):
    ``"kitchen"`` (typical: cupboards at 0.3-0.7 of random colour on a wall at 0.6, a
    worktop, a dark oven door), ``"park"`` (typical: a pale sky, green lawn with texture,
    four trees, a path), ``"dusk"`` (dark by design but not low-key, as the walk's rocket:
    a dim textured scene at 0.08-0.25 throughout) and ``"fog"`` (bright by design, grey:
    a low-contrast field at 0.75-0.9 with faint shapes)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"kitchen": 81, "park": 82, "dusk": 83, "fog": 84}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    tex = gaussian_filter(rng.standard_normal((h, w)), 2)
    if name == "kitchen":
        img = np.full((h, w, 3), 0.6) * np.array([1.0, 0.97, 0.9]) + 0.03 * tex[..., None]
        for i in range(5):
            x0 = i * w // 5 + w // 40
            img[h // 10:h // 3, x0:x0 + w // 6] = rng.uniform(0.3, 0.7, 3)
        img[h // 2:h // 2 + h // 20] = np.array([0.75, 0.72, 0.68])
        img[h // 2 + h // 20:, w // 3:w // 2] = np.array([0.08, 0.08, 0.09])
    elif name == "park":
        img = np.where((yy < 0.4 * h)[..., None], np.array([0.7, 0.8, 0.92]),
                       ((0.35 + 0.1 * tex) * (0.8 + 0.4 * yy / h))[..., None]
                       * np.array([0.6, 1.0, 0.45]))
        for _ in range(4):
            cx, cy = rng.uniform(0, w), rng.uniform(0.3, 0.45) * h
            crown = (xx - cx) ** 2 + ((yy - cy) * 1.3) ** 2 < (w / 14) ** 2
            img[crown] = np.array([0.15, 0.3, 0.12])
        img[np.abs(xx - w / 2 - (yy - h) * 0.4) < (yy - 0.4 * h).clip(0) * 0.15] = \
            np.array([0.7, 0.65, 0.55])
    elif name == "dusk":
        img = ((0.15 + 0.04 * tex + 0.06 * np.sin(xx / w * 5 + yy / h * 3))[..., None]
               * np.array([1.0, 0.9, 1.1]))
    else:
        img = 0.84 + 0.03 * tex - 0.06 * (yy / h)
        for _ in range(5):
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            img -= 0.05 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * (w / 12) ** 2))
        img = np.repeat(img[..., None], 3, -1)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round8_lowlight_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 8's held-out photos (issue 68, h68ll8; written down and committed after the
    noise-floor rule, ``iclr25._guard.not_underexposed``'s third reason, and before it ran
    on them), (3, side·3/4, side) in [0, 1]; run at a user's size (``--side 192``). 12
    images and crops used by no earlier set, testbed, test, the issue-68 walk or NIQE's
    pristine model:

    * typical (8): the top thirds (rows 0 to 1/3) of ``china``, ``flower`` and
      ``grace_hopper`` (colour; earlier sets used them whole, by quarters, by centre
      halves and ``china``'s middle band), ``flower``'s middle band (rows 1/3 to 2/3), two
      3 × 4 montages of scikit-image's ``lfw_subset`` (grey: faces 24-35, non-face patches
      124-135; earlier sets used faces 0-23 and patches 100-123) and two generated scenes
      (:func:`round8_lowlight_generated`: a kitchen, a park);
    * near-black (2): ``retina``'s bottom-left corner (150 × 200 px of the 1411-px photo:
      black) and its bottom-right 300 × 400 px (black with the fundus's rim; the walk
      used its top-left corner, round 4 its centre half, round 3 its centre);
    * dark by design, not low-key (1): a generated dusk (dim throughout, as the walk's
      rocket crop);
    * bright by design (1): a generated fog (grey).

    Grey photos (three equal channels, for the tint check): both montages and the fog."""
    import skimage.data

    china, flower, hopper = _colour_samples()
    retina = skimage.data.retina()
    top = ((0, 1 / 3), (0, 1))
    raw = {"china top": _part(china, *top), "flower top": _part(flower, *top),
           "hopper top": _part(hopper, *top),
           "flower middle": _part(flower, (1 / 3, 2 / 3), (0, 1)),
           "faces 24-35": _lfw_montage(24), "patches 124-135": _lfw_montage(124)}
    raw |= {n: round8_lowlight_generated(n, 300, 400) for n in ("kitchen", "park")}
    raw["retina bottom-left"] = retina[-150:, :200]
    raw["retina bottom-right"] = retina[-300:, -400:]
    raw |= {n: round8_lowlight_generated(n, 300, 400) for n in ("dusk", "fog")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round8_lowlight(side: int, steps: int, seed: int) -> None:
    """Round 8: low light on :func:`round8_lowlight_photos` at :data:`ROUND8_DARK` with
    round 7's outputs (:func:`round7_lowlight_outputs`) and the network, by the rule of the
    ``iclr25`` imported (run once with the branch's, once with main's: ``PYTHONPATH``), at
    margin 0 and at the default margin; which reason each input got; the tint check on
    grey photos; ``fallback="classical"``'s switches."""
    from iclr25._guard import MARGINS

    recs = lowlight_cases(round8_lowlight_photos(side), steps, seed + 4000,
                          dark_params=ROUND8_DARK, outputs=round7_lowlight_outputs)
    margin_report("low light, round 8", recs, MARGINS["exposure"])
    for name in dict.fromkeys(r["case"] for r in recs):
        r = next(r for r in recs if r["case"] == name)
        print(f"  {name}: {r['why'] or 'judged'}")
    colour_report("low light, round 8", recs)
    fallback_report("low light, round 8", recs)

# --- round 9: low light's rule for realistic dark photos (h68ll9), on another new set --------

#: Darkenings of round 9, none used before (nor by the issue-68 walks: 0.25·x^1.8 + noise;
#: 0.12·x, 60 photons at white, read σ 0.004), each written to 8 bits as a file is
#: (:func:`round9_darken`): ``"camera"`` as a camera under-exposes: in linear light (the
#: sRGB curve undone), 4.3 stops under (× 1/20), Poisson shot noise at 800 photons at
#: linear white (40 after the exposure), read noise σ 0.003, the sRGB curve re-applied;
#: ``"display"`` the exposure scaled on the encoded values (as walk 5 did) with 10 photons
#: at white and read σ 0.005; ``"steep"`` ``degrade``'s model, k 0.2, γ 1.9, λ 250, σ 0.008.
ROUND9_DARK = ({"space": "camera", "k": 1 / 20, "lam": 800.0, "read_sigma": 0.003},
               {"space": "display", "k": 0.1, "gamma": 1.0, "lam": 100.0, "read_sigma": 0.005},
               {"space": "display", "k": 0.2, "gamma": 1.9, "lam": 250.0, "read_sigma": 0.008})


def _srgb_to_linear(v: torch.Tensor) -> torch.Tensor:
    return torch.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def _linear_to_srgb(v: torch.Tensor) -> torch.Tensor:
    return torch.where(v <= 0.0031308, 12.92 * v, 1.055 * v.clamp(min=0) ** (1 / 2.4) - 0.055)


def round9_darken(J: torch.Tensor, p: dict, seed: int) -> torch.Tensor:
    """``J`` (3, h, w) in [0, 1] darkened by one of :data:`ROUND9_DARK`: Poisson(λ·k·v^γ)/λ
    + N(0, σ_r²), clipped to [0, 1], ``v`` the sRGB values (``"display"``) or the linear
    light (``"camera"``: γ 1, the sRGB curve undone before and re-applied after), then
    rounded to 8 bits. Seeded by ``seed``; float64."""
    g = torch.Generator().manual_seed(seed)
    v = _srgb_to_linear(J.double()) if p["space"] == "camera" else J.double()
    v = p["k"] * v ** p.get("gamma", 1.0)
    d = torch.poisson(p["lam"] * v, generator=g) / p["lam"]
    d = (d + p["read_sigma"] * torch.randn(d.shape, generator=g, dtype=d.dtype)).clamp(0, 1)
    if p["space"] == "camera":
        d = _linear_to_srgb(d)
    return (d * 255).round() / 255


def round9_lowlight_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 9's generated scenes, (h, w, 3) uint8, seeded (none like an earlier one):
    typical ``"street"`` (a sky at 0.65-0.85 over six building facades at 0.3-0.7 with
    windows, a road at 0.35), ``"bookshelf"`` (shelves at 0.35 holding 60 books of random
    colour at 0.15-0.8), ``"beach"`` (a sky, a textured sea at 0.3-0.45, sand at 0.7);
    dark by design ``"candle"`` (a room at 0.01-0.03 lit by a flame at 0.95 whose glow
    falls off over a fifth of the frame: low-key) and ``"twilight"`` (a dim landscape
    under a dim sky, 0.05-0.2 throughout, as walk 4's rocket and round 8's dusk: not
    low-key)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"street": 91, "bookshelf": 92, "beach": 93, "candle": 94,
                                 "twilight": 95}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    tex = gaussian_filter(rng.standard_normal((h, w)), 2)
    if name == "street":
        img = (0.85 - 0.2 * yy / h)[..., None] * np.array([0.8, 0.9, 1.0])
        for i in range(6):
            x0, top = i * w // 6, int(rng.uniform(0.15, 0.4) * h)
            img[top:int(0.75 * h), x0:x0 + w // 6] = rng.uniform(0.3, 0.7, 3)
            for r in range(top + h // 20, int(0.7 * h), h // 10):
                for c in range(x0 + w // 40, x0 + w // 6 - w // 30, w // 20):
                    img[r:r + h // 30, c:c + w // 50] = 0.15
        img[int(0.75 * h):] = 0.35 + 0.03 * tex[int(0.75 * h):, :, None]
    elif name == "bookshelf":
        img = np.full((h, w, 3), 0.35) * np.array([1.0, 0.8, 0.6]) + 0.03 * tex[..., None]
        for r in range(4):
            y0, x = r * h // 4 + h // 40, 0
            while x < w:
                bw = int(rng.integers(w // 60, w // 25))
                img[y0:y0 + int(rng.uniform(0.6, 0.85) * h / 4), x:x + bw] = \
                    rng.uniform(0.15, 0.8, 3)
                x += bw + 1
    elif name == "beach":
        img = np.where((yy < 0.4 * h)[..., None], (0.8 - 0.2 * yy / h)[..., None]
                       * np.array([0.75, 0.85, 1.0]),
                       np.where((yy < 0.65 * h)[..., None],
                                (0.38 + 0.07 * tex)[..., None] * np.array([0.4, 0.7, 1.0]),
                                (0.7 + 0.05 * tex)[..., None] * np.array([1.0, 0.9, 0.7])))
    elif name == "candle":
        cy, cx = 0.55 * h, 0.5 * w
        glow = np.exp(-np.hypot(yy - cy, xx - cx) / (w / 5))
        img = (0.01 + 0.02 * (1 + tex) / 2 + 0.5 * glow ** 2)[..., None] * np.array(
            [1.0, 0.75, 0.45])
        flame = ((yy - cy) / (h / 14)) ** 2 + ((xx - cx) / (w / 60)) ** 2 < 1
        img[flame] = np.array([0.98, 0.95, 0.85])
    else:
        img = np.where((yy < (0.5 + 0.08 * np.sin(xx / w * 7)) * h)[..., None],
                       (0.2 - 0.06 * yy / h)[..., None] * np.array([0.8, 0.9, 1.2]),
                       (0.08 + 0.03 * tex)[..., None] * np.array([0.9, 1.0, 0.8]))
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


#: Round 9's photos by kind (:func:`round9_lowlight_photos`).
ROUND9_KINDS = {"typical": ("china bottom", "flower bottom", "hopper middle", "faces 36-47",
                            "patches 136-147", "street", "bookshelf", "beach"),
                "dark": ("candle", "twilight", "retina top-right")}


def round9_lowlight_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 9's held-out photos (issue 68, h68ll9; written down and committed after the rule,
    ``iclr25._guard.low_key`` and ``blank_sigma``, and before it ran on them),
    (3, side·3/4, side) in [0, 1]; run at a user's size (``--side 256``). 11 images and
    crops used by no earlier set, testbed, test, walk or NIQE's pristine model:

    * typical (8): the bottom thirds (rows 2/3 to 1) of ``china`` and ``flower`` and
      ``grace_hopper``'s middle band (rows 1/3 to 2/3; earlier sets used them whole, by
      quarters, centre halves, top thirds and middle bands of the other two), two 3 × 4
      montages of scikit-image's ``lfw_subset`` (grey: faces 36-47, non-face patches
      136-147; earlier sets used faces 0-35 and patches 100-135) and three generated
      scenes (:func:`round9_lowlight_generated`: a street, a bookshelf, a beach);
    * dark by design (3): a generated candle-lit room (low-key), a generated twilight
      (dim throughout, not low-key) and ``retina``'s top-right corner (150 × 200 px:
      black; the walk used its top-left corner, round 8 the bottom ones).

    Grey photos (three equal channels, for the tint check): both montages."""
    import skimage.data

    china, flower, hopper = _colour_samples()
    bottom = ((2 / 3, 1), (0, 1))
    raw = {"china bottom": _part(china, *bottom), "flower bottom": _part(flower, *bottom),
           "hopper middle": _part(hopper, (1 / 3, 2 / 3), (0, 1)),
           "faces 36-47": _lfw_montage(36), "patches 136-147": _lfw_montage(136)}
    raw |= {n: round9_lowlight_generated(n, 300, 400) for n in ("street", "bookshelf",
                                                                "beach", "candle", "twilight")}
    raw["retina top-right"] = skimage.data.retina()[:150, -200:]
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def kind_report(kind: str, recs: list[dict], kinds: dict[str, tuple[str, ...]],
                margin: float) -> None:
    """:func:`margin_report`'s default-margin counts per kind of photo, and how many of the
    network's outputs the default returns (with their gain over the input, by the
    reference)."""
    for k, names in kinds.items():
        sub = [r for r in recs if r["case"].rsplit(" low light", 1)[0] in names]
        t = np.zeros((2, 2), int)
        for r in sub:
            o, i, _ = r["ref"]
            so, si, _ = r["new"]
            kept = so >= si + margin and not r.get("why")
            t[1 if kept else 0, 1 if o >= i else 0] += 1
        net = [r for r in sub if r["out"] == "network"]
        got = [r["ref"][0] - r["ref"][1] for r in net
               if r["new"][0] >= r["new"][1] + margin and not r.get("why")]
        print(f"{kind}, {k}: warned&worse {t[0, 0]}, warned&better {t[0, 1]}, quiet&worse "
              f"{t[1, 0]}, quiet&better {t[1, 1]}; agreement {np.trace(t) / t.sum():.1%} of "
              f"{t.sum()}; the network's output returned for {len(got)} of {len(net)} "
              f"(gain over the input by the reference: "
              f"{', '.join(f'{g:+.1f}' for g in got) or '-'} dB)")


def run_round9_lowlight(side: int, steps: int, seed: int) -> None:
    """Round 9: low light on :func:`round9_lowlight_photos` darkened by :data:`ROUND9_DARK`
    (:func:`round9_darken`) with round 7's outputs (:func:`round7_lowlight_outputs`) and
    the network, by the rule of the ``iclr25`` imported (run once with the branch's, once
    with main's: ``PYTHONPATH``), at margin 0 and at the default margin; per kind; which
    reason each input got; the tint check on grey photos; ``fallback="classical"``'s
    switches."""
    from iclr25._guard import MARGINS

    recs = lowlight_cases(round9_lowlight_photos(side), steps, seed + 5000,
                          dark_params=ROUND9_DARK, outputs=round7_lowlight_outputs,
                          darken=round9_darken)
    margin_report("low light, round 9", recs, MARGINS["exposure"])
    kind_report("low light, round 9", recs, ROUND9_KINDS, MARGINS["exposure"])
    for name in dict.fromkeys(r["case"] for r in recs):
        r = next(r for r in recs if r["case"] == name)
        print(f"  {name}: {r['why'] or 'judged'}")
    colour_report("low light, round 9", recs)
    fallback_report("low light, round 9", recs)


# --- round 9, blur and defocus: the defocus prior's exponent (h68post9), on another new set --

#: Blur widths of round 9 (none used before by either kind: Gaussian σ 1.0-3.0 and disk
#: radii 1.2-4.0 earlier, at 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.2, 2.4, 2.5,
#: 2.7, 2.8, 3.0, 3.2, 3.5, 3.6, 4.0).
ROUND9_BLUR = (("blur", 0.9), ("blur", 1.9), ("blur", 2.6),
               ("defocus", 1.7), ("defocus", 2.9), ("defocus", 3.8))


def round9_blur_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 9's generated scenes, (h, w, 3) uint8, seeded (kinds no earlier set has):
    ``"stained glass"`` (a Voronoi mosaic of 70 cells of saturated colour with dark leads
    2 px wide), ``"fabric"`` (grey-blue: a plain weave of threads 6 px apart, shaded
    across each thread, with a slight irregularity) and ``"fingerprint"`` (grey: ridges
    7 px apart around a core, their phase warped by smooth noise)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"stained glass": 91, "fabric": 92, "fingerprint": 93}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    if name == "stained glass":
        seeds = rng.uniform(0, 1, (70, 2)) * np.array([h, w])
        d = np.sqrt((yy[..., None] - seeds[:, 0]) ** 2 + (xx[..., None] - seeds[:, 1]) ** 2)
        two = np.sort(d, -1)[..., :2]
        colours = rng.uniform(0, 1, (70, 3)) ** 2
        colours /= colours.max(1, keepdims=True)
        img = colours[d.argmin(-1)] * 0.9
        img[two[..., 1] - two[..., 0] < 2.0] = 0.08
    elif name == "fabric":
        jitter = gaussian_filter(rng.standard_normal((h, w)), 4) * 1.5
        u, v = (xx + jitter) / 6.0, (yy - jitter) / 6.0
        warp = 0.5 + 0.5 * np.cos(2 * np.pi * (u % 1 - 0.5))    # a thread's shading
        weft = 0.5 + 0.5 * np.cos(2 * np.pi * (v % 1 - 0.5))
        over = (np.floor(u) + np.floor(v)) % 2 == 0              # which thread is on top
        lum = np.where(over, 0.25 + 0.6 * warp, 0.2 + 0.55 * weft)
        img = lum[..., None] * np.array([0.75, 0.85, 1.0])
    else:
        cy, cx = 0.45 * h, 0.55 * w
        warp = gaussian_filter(rng.standard_normal((h, w)), h / 25) * 10
        r = np.sqrt((yy - cy) ** 2 + ((xx - cx) * 0.8) ** 2) + warp
        img = np.repeat((0.55 + 0.4 * np.cos(2 * np.pi * r / 7.0))[..., None], 3, -1)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round9_blur_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 9's held-out photos (issue 68, h68post9; written down and committed after the
    rule, the defocus prior's exponent read with the radius and the score's least gain
    over the grid's neighbours, and before it ran on them), (3, side·3/4, side) in [0, 1]:
    images and crops used by no earlier set of this benchmark, testbed, test or NIQE's
    pristine model: the bottom thirds (rows 2/3 to 1) of ``china``, ``flower`` and
    ``grace_hopper`` (colour; earlier sets used them whole, by quarters, by centre halves,
    by their top thirds and ``china``'s and ``flower``'s middle bands), two 3 × 4 montages
    of scikit-image's ``lfw_subset`` (grey: faces 36-47 and non-face patches 136-147;
    earlier sets used faces 0-35 and patches 100-135) and three generated scenes
    (:func:`round9_blur_generated`: stained glass; fabric and a fingerprint generated at
    the final size). Low light's round 9 (h68ll9, declared at the same time on another
    branch) darkens ``china``'s and ``flower``'s bottom thirds and the same montages: a
    different check; none of these was seen while the blur and defocus measures were
    written."""

    china, flower, hopper = _colour_samples()
    bottom = ((2 / 3, 1), (0, 1))
    raw = {"china bottom": _part(china, *bottom), "flower bottom": _part(flower, *bottom),
           "hopper bottom": _part(hopper, *bottom), "faces 36-47": _lfw_montage(36),
           "patches 136-147": _lfw_montage(136)}
    raw["stained glass"] = round9_blur_generated("stained glass", 300, 400)
    # generated at the final size, as round 7's zone plate: resized, threads 6 px and
    # ridges 7 px apart would alias
    raw |= {n: round9_blur_generated(n, side * 3 // 4, side)
            for n in ("fabric", "fingerprint")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round9_blur(side: int) -> None:
    """Round 9: the library's blur and defocus measures (whichever ``iclr25`` is imported:
    run once with the branch's, once with main's, ``PYTHONPATH``) on
    :func:`round9_blur_photos` at :data:`ROUND9_BLUR` with :func:`new_blur_outputs`, at
    margin 0 and at each measure's default margin; the radius read where the library reads
    it."""
    from iclr25 import _guard

    clean = round9_blur_photos(side)
    blur_margin_report("round 9", new_blur_cases(clean, ROUND9_BLUR))
    for name, J in clean.items():
        for fam, r in ROUND9_BLUR:
            if fam == "defocus":
                y = reblur(J[None], torch.from_numpy(_guard.disk_psf(r)))[0].clamp(0, 1)
                print(f"  {name} disk {r:g}: radius read "
                      f"{float(_guard.defocus_radius(y[None])[0]):.2f}")


# --- the defaults (h68dm10): chosen on the development sets by a rule written first ----------

#: The grid of the sweep (h68dm10), written before it ran: posterior standard deviations ours
#: is scored below its expected PSNR (``iclr25._guard._POSTERIOR_SDS``) and margins (dB) for
#: defocus; margins (dB) for blur (the re-blur PSNR).
SWEEP_SDS = (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
SWEEP_DEFOCUS_MARGINS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
SWEEP_BLUR_MARGINS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)


def dev_sets(side: int) -> dict[str, tuple[dict[str, torch.Tensor], tuple]]:
    """The development sets of blur and defocus (rounds 3, 5, 6, 7, 9): name -> (photos,
    blurs)."""
    return {"round 3": (new_photos(side), NEW_BLUR),
            "round 5": (round5_photos(side), ROUND5_BLUR),
            "round 6": (round6_blur_photos(side), ROUND6_BLUR),
            "round 7": (round7_defocus_photos(side), ROUND7_DEFOCUS),
            "round 9": (round9_blur_photos(side), ROUND9_BLUR)}


def sweep_cases(clean: dict[str, torch.Tensor], blurs) -> list[dict]:
    """One record per (photo, blur of ``blurs``, output of :func:`new_blur_outputs`): the
    family, the reference PSNRs (output, input) and what the sweep's scores are made of:
    for blur the re-blur PSNRs (output, input); for defocus the posterior's terms
    (``_Posterior.terms``: expected MSE and the sd of the output, the input's MSE)."""
    from iclr25._guard import _Posterior, disk_psf

    recs = []
    for name, J in clean.items():
        for fam, width in blurs:
            k = gaussian_psf(width) if fam == "blur" else disk_psf(width)
            y = reblur(J[None], torch.from_numpy(k))[0].clamp(0, 1)
            if fam == "defocus":
                post = _Posterior.of(y)
                s_in = post.terms(y)[0]
            else:
                inp = _Inputs(y[None], None, fam)

                def score(o, inp=inp):
                    return float(MEASURES["reblur"].score(o[None], None, inp)[0])
                s_in = score(y)
            for oname, o in new_blur_outputs(y, fam, width).items():
                recs.append({"fam": fam, "case": f"{name} {fam} {width:g}", "out": oname,
                             "ref": (float(psnr(o, J)), float(psnr(y, J))),
                             "s": (post.terms(o) if fam == "defocus" else score(o), s_in)})
    return recs


def _kept(r: dict, sds: float, margin: float) -> bool:
    """Whether the default returns ours for record ``r`` at ``sds`` (defocus) and ``margin``
    (NaN clears no margin, as in ``guarded``)."""
    so, si = r["s"]
    if r["fam"] == "defocus":
        (mse, sd), mse_in = so, si
        so, si = -10 * math.log10(max(mse + sds * sd, 1e-30)), -10 * math.log10(mse_in)
    return bool(so >= si + margin)


def sweep_table(sets: dict[str, list[dict]], fam: str, grid: list[tuple[float, float]],
                main: tuple[float, float]) -> tuple[float, float]:
    """Print, per (SDs, margin) of ``grid``, each set's and the pooled confusion of ``fam``
    (warned&worse / warned&better / quiet&worse / quiet&better), agreement and outputs
    returned worse; return the point the rule picks (the fewest returned worse pooled,
    then the highest pooled agreement, then the nearest to ``main``, then the smaller
    margin)."""
    best, key = None, None
    for sds, m in grid:
        cells, pooled = [], np.zeros((2, 2), int)
        for name, recs in sets.items():
            t = np.zeros((2, 2), int)
            for r in (r for r in recs if r["fam"] == fam):
                o, i = r["ref"]
                t[int(_kept(r, sds, m)), int(o >= i)] += 1
            if t.sum():
                pooled += t
                cells.append(f"{name} {np.trace(t) / t.sum():.1%} ({t[1, 0]})")
        a = np.trace(pooled) / pooled.sum()
        print(f"{fam} SDs {sds:g} margin {m:g}: pooled {_counts(pooled)} {a:.1%}, returned "
              f"worse {pooled[1, 0]}; " + "; ".join(cells))
        k = (pooled[1, 0], -a, abs(sds - main[0]) + abs(m - main[1]), m)
        if key is None or k < key:
            best, key = (sds, m), k
    print(f"{fam}: the rule picks SDs {best[0]:g}, margin {best[1]:g}")
    return best


def run_defaults_sweep(side: int) -> None:
    """The defaults' sweep (h68dm10) on :func:`dev_sets`: the tables and the choice of the
    rule in the module's docstring."""
    sets = {n: sweep_cases(c, b) for n, (c, b) in dev_sets(side).items()}
    sweep_table(sets, "defocus", [(s, m) for s in SWEEP_SDS for m in SWEEP_DEFOCUS_MARGINS],
                (2.0, 0.0))
    sweep_table(sets, "blur", [(0.0, m) for m in SWEEP_BLUR_MARGINS], (0.0, 1.0))


# --- round 10, blur and defocus: the defaults of h68dm10 on another new set --------------------

#: Blur widths of round 10 (none used before by either kind: Gaussian σ 0.9-3.0 and disk
#: radii 1.2-4.0 earlier, at 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.2,
#: 2.4, 2.5, 2.6, 2.7, 2.8, 2.9, 3.0, 3.2, 3.5, 3.6, 3.8, 4.0).
ROUND10_BLUR = (("blur", 1.25), ("blur", 2.1), ("blur", 3.4),
                ("defocus", 1.55), ("defocus", 2.3), ("defocus", 4.4))


def round10_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 10's generated scenes, (h, w, 3) uint8, seeded (kinds no earlier set has):
    ``"skyline"`` (a dusk sky over 24 buildings with lit windows 2 px square, 2 px apart),
    ``"foliage"`` (2,500 overlapping leaves: ellipses of greens and yellows, shaded along
    their length, sizes from a power law in 1.5-15 px) and ``"halftone"`` (grey: black
    dots on white on a 45° grid 5 px apart, their radii set by a smooth random field)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"skyline": 101, "foliage": 102, "halftone": 103}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    if name == "skyline":
        t = (yy / h)[..., None]
        img = (1 - t) * np.array([0.15, 0.2, 0.45]) + t * np.array([0.95, 0.55, 0.3])
        x0 = 0
        while x0 < w:
            bw, top = int(rng.integers(w // 16, w // 6)), int(rng.integers(h // 6, 2 * h // 3))
            img[top:, x0:x0 + bw] = rng.uniform(0.08, 0.2) * np.array([0.9, 0.9, 1.0])
            lit = rng.uniform(size=(h, bw)) < rng.uniform(0.2, 0.6)
            win = ((yy[top:, x0:x0 + bw] - top) % 4 >= 2) & ((xx[top:, x0:x0 + bw] - x0) % 4
                                                            >= 2) & lit[top:, :w - x0]
            img[top:, x0:x0 + bw][win] = np.array([1.0, 0.85, 0.45])
            x0 += bw + int(rng.integers(0, 3))
    elif name == "foliage":
        img = np.tile(np.array([0.1, 0.18, 0.08]), (h, w, 1))
        u = rng.uniform(size=2500)
        sizes = 1 / (u / 1.5 + (1 - u) / 15)      # density ∝ r^-2 on [1.5, 15]
        for r in sizes:
            cy, cx, th = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(0, np.pi)
            lo = (max(int(cy - r) - 1, 0), max(int(cx - r) - 1, 0))
            sy, sx = slice(lo[0], int(cy + r) + 2), slice(lo[1], int(cx + r) + 2)
            dy, dx = yy[sy, sx] - cy, xx[sy, sx] - cx
            a = dx * np.cos(th) + dy * np.sin(th)               # along the leaf
            b = -dx * np.sin(th) + dy * np.cos(th)
            inside = (a / r) ** 2 + (b / (0.45 * r)) ** 2 <= 1
            col = np.array([rng.uniform(0.2, 0.7), rng.uniform(0.45, 0.9), rng.uniform(0, 0.25)])
            shade = (0.75 + 0.25 * a / r)[..., None] * col
            img[sy, sx][inside] = shade[inside]
    else:
        field = gaussian_filter(rng.standard_normal((h, w)), min(h, w) / 12)
        field = (field - field.min()) / (field.max() - field.min())
        u, v = (xx + yy) / (5 * math.sqrt(2)), (xx - yy) / (5 * math.sqrt(2))
        d = np.sqrt((u - np.round(u)) ** 2 + (v - np.round(v)) ** 2) * 5
        img = np.repeat(np.where(d <= 0.3 + 2.4 * field, 0.05, 0.95)[..., None], 3, -1)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round10_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 10's held-out photos (issue 68, h68dm10; declared after the defaults were chosen
    and committed, before they ran on it), (3, side·3/4, side) in [0, 1]: images and crops
    used by no earlier set of this benchmark, testbed, test or NIQE's pristine model:
    zoomed windows of ``china`` (rows 0.3-0.65, columns 0.1-0.55: the pagoda), ``flower`` (rows
    0.55-0.9, columns 0.05-0.5) and ``grace_hopper`` (rows 0.05-0.45, columns 0.25-0.75)
    at about twice the scale of the quarters earlier sets used, two 3 × 4 montages of
    ``lfw_subset`` (grey: faces 48-59 and non-face patches 148-159; earlier sets used
    faces 0-47 and patches 100-147), scikit-image's ``binary_blobs`` (grey, seed 10) and
    three generated scenes (:func:`round10_generated`: foliage; the skyline and the
    halftone generated at the final size, so that no resizing aliases their 2-px windows
    and 5-px dots)."""
    import skimage.data

    china, flower, hopper = _colour_samples()
    raw = {"china window": _part(china, (0.3, 0.65), (0.1, 0.55)),
           "flower window": _part(flower, (0.55, 0.9), (0.05, 0.5)),
           "hopper window": _part(hopper, (0.05, 0.45), (0.25, 0.75)),
           "faces 48-59": _lfw_montage(48), "patches 148-159": _lfw_montage(148),
           "binary blobs": _grey(skimage.data.binary_blobs(256, 0.08, rng=10)),
           "foliage": round10_generated("foliage", 300, 400)}
    raw |= {n: round10_generated(n, side * 3 // 4, side) for n in ("skyline", "halftone")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round10_blur(side: int) -> None:
    """Round 10: the library's blur and defocus defaults (whichever ``iclr25`` is imported:
    run once with the branch's, h68dm10's margins, once with main's, ``PYTHONPATH``) on
    :func:`round10_photos` at :data:`ROUND10_BLUR` with :func:`new_blur_outputs`, at
    margin 0 and at each measure's default margin."""
    from iclr25 import _guard

    print(f"defaults: margins {_guard.MARGINS}, posterior SDs {_guard._POSTERIOR_SDS:g}")
    blur_margin_report("round 10", new_blur_cases(round10_photos(side), ROUND10_BLUR))


# --- h68blur11: candidate measures for blur and defocus, chosen by h68dm10's rule ------------

#: The candidates' grid (h68blur11), written and committed before the sweep ran. Per kind
#: (blur: Gaussian; defocus: disk), each output is scored three ways, all from the photo:
#:
#: * ``"posterior"`` (a): the posterior PSNR (``iclr25._guard._Posterior``) with the kernel
#:   of the kind's family, its width by maximum likelihood (Gaussian σ among
#:   ``_guard._SIGMAS`` for blur, the disk's radius for defocus), at ``sds`` posterior SDs
#:   and margin ``mp`` (dB); for defocus this is main's measure;
#: * ``"both"`` (b): ours kept only where it clears the input by the posterior (0 SDs,
#:   margin ``mp``) AND by a re-blur PSNR at margin ``mr``: the library's re-blur
#:   (``"lib"``: width from the edges, :func:`iclr25._guard.blur_sigma`) or the re-blur by
#:   the posterior's own maximum-likelihood kernel (``"ml"``);
#: * ``"interval"`` (c): the posterior PSNR's gain over the input at its worst over the
#:   widths of the likelihood's 95% confidence set (log-likelihood within
#:   :data:`BLUR11_CHI2` of its maximum: χ²₁'s 95% point over 2, Wilks), at ``sds`` SDs and
#:   margin ``mp``: a margin scaled by the width estimate's own uncertainty (and the SDs by
#:   the posterior's).
#:
#: **Rule** (h68dm10's): pooled over the kind's development cases (rounds 3, 5, 6, 9 for
#: blur; 3, 5, 6, 7, 9 for defocus), the fewest returned worse (quiet & worse), then the
#: highest pooled agreement, then the fewer parameters ("posterior", "interval", "both"),
#: then the smaller margins. It becomes the default only if it returns no more worse than
#: main's default on the same cases (blur: re-blur at 5 dB; defocus: posterior at 0 SDs,
#: 1.5 dB) AND agrees more often; else the table is reported and nothing changes.
BLUR11_SDS = (0.0, 1.0, 2.0, 4.0, 8.0)
BLUR11_POSTERIOR_MARGINS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
BLUR11_BOTH_POSTERIOR = (0.0, 0.25, 0.5, 1.0, 1.5)
BLUR11_BOTH_REBLUR = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)
BLUR11_INTERVAL_SDS = (0.0, 2.0)
BLUR11_INTERVAL_MARGINS = (0.0, 0.25, 0.5, 1.0, 1.5)
BLUR11_CHI2 = 1.92


def blur11_grid() -> list[tuple]:
    """The candidates of :data:`BLUR11_SDS` etc., in the rule's order of simplicity:
    ``("posterior", sds, mp)``, ``("interval", sds, mp)``, ``("both", rb, mp, mr)``."""
    return ([("posterior", s, m) for s in BLUR11_SDS for m in BLUR11_POSTERIOR_MARGINS]
            + [("interval", s, m) for s in BLUR11_INTERVAL_SDS for m in BLUR11_INTERVAL_MARGINS]
            + [("both", rb, mp, mr) for rb in ("lib", "ml") for mp in BLUR11_BOTH_POSTERIOR
               for mr in BLUR11_BOTH_REBLUR])


def blur11_cases(clean: dict[str, torch.Tensor], blurs) -> list[dict]:
    """One record per (photo, blur of ``blurs``, output of :func:`new_blur_outputs`): the
    family, the reference PSNRs (output, input) and the candidates' raw scores: ``"post"``,
    per width of the likelihood's confidence set (the likeliest first), the posterior's
    terms of the output (expected MSE, sd) and the input's expected MSE; ``"lib"`` and
    ``"ml"``, the re-blur PSNRs (output, input) by the library's kernel and by the
    likeliest kernel."""
    from iclr25 import _guard

    recs = []
    for name, J in clean.items():
        for fam, width in blurs:
            k = gaussian_psf(width) if fam == "blur" else _guard.disk_psf(width)
            y = reblur(J[None], torch.from_numpy(k))[0].clamp(0, 1)
            Y, w2, n2 = _guard._spectra(y)
            ll = _guard._log_likelihoods((Y * Y).mean(0), w2, n2, fam)
            ll = np.nan_to_num(ll, nan=-math.inf)
            widths = _guard._WIDTHS[fam][0]
            order = [int(ll.argmax())] + [i for i in np.flatnonzero(ll >= ll.max() - BLUR11_CHI2)
                                          if i != ll.argmax()]
            posts = [_guard._Posterior.of(y, float(widths[i]), fam) for i in order]
            mse_in = [p.terms(y)[0] for p in posts]
            k_ml = torch.from_numpy(_guard._WIDTHS[fam][1](float(widths[order[0]])))
            inp = _Inputs(y[None], None, fam)

            def rb(o, k=None, inp=inp, y=y):
                if k is None:
                    return float(MEASURES["reblur"].score(o[None], None, inp)[0])
                return float(psnr(reblur(o[None], k)[0], y))
            s_lib, s_ml = rb(y), rb(y, k_ml)
            for oname, o in new_blur_outputs(y, fam, width).items():
                recs.append({"fam": fam, "case": f"{name} {fam} {width:g}", "out": oname,
                             "ref": (float(psnr(o, J)), float(psnr(y, J))),
                             "width": float(widths[order[0]]), "nconf": len(order),
                             "post": [(*p.terms(o), mi)
                                      for p, mi in zip(posts, mse_in, strict=True)],
                             "lib": (rb(o), s_lib), "ml": (rb(o, k_ml), s_ml)})
    return recs


def _gain_db(t: tuple[float, float, float], sds: float) -> float:
    """The posterior PSNR's gain (dB) of an output over the input from its terms."""
    mse, sd, mse_in = t
    return 10 * math.log10(mse_in) - 10 * math.log10(max(mse + sds * sd, 1e-30))


def blur11_kept(r: dict, cand: tuple) -> bool:
    """Whether the default returns ours for record ``r`` under candidate ``cand``."""
    if cand[0] == "posterior":
        return _gain_db(r["post"][0], cand[1]) >= cand[2]
    if cand[0] == "interval":
        return min(_gain_db(t, cand[1]) for t in r["post"]) >= cand[2]
    _, rb, mp, mr = cand
    so, si = r[rb]
    return _gain_db(r["post"][0], 0.0) >= mp and so >= si + mr


def blur11_table(sets: dict[str, list[dict]], fam: str, main_kept) -> tuple:
    """Print each candidate's pooled and per-set confusion of ``fam`` (warned&worse /
    warned&better / quiet&worse / quiet&better), agreement and returned worse, and main's
    default's (``main_kept(r)``); return the candidate the rule picks and whether it beats
    main's (no more returned worse, higher agreement)."""
    def table(kept):
        cells, pooled = [], np.zeros((2, 2), int)
        for name, recs in sets.items():
            t = np.zeros((2, 2), int)
            for r in (r for r in recs if r["fam"] == fam):
                o, i = r["ref"]
                t[int(kept(r)), int(o >= i)] += 1
            if t.sum():
                pooled += t
                cells.append(f"{name} {np.trace(t) / t.sum():.1%} ({t[1, 0]})")
        return pooled, np.trace(pooled) / pooled.sum(), "; ".join(cells)

    mt, ma, mc = table(main_kept)
    print(f"{fam} main's default: pooled {_counts(mt)} {ma:.1%}, returned worse {mt[1, 0]}; {mc}")
    best, key = None, None
    for j, cand in enumerate(blur11_grid()):
        t, a, c = table(lambda r, cand=cand: blur11_kept(r, cand))
        print(f"{fam} {' '.join(map(str, cand))}: pooled {_counts(t)} {a:.1%}, returned "
              f"worse {t[1, 0]}; {c}")
        k = (t[1, 0], -round(a, 12), j)
        if key is None or k < key:
            best, key = cand, k
    wins = key[0] <= mt[1, 0] and -key[1] > ma
    print(f"{fam}: the rule picks {' '.join(map(str, best))}: returned worse {key[0]}, "
          f"{-key[1]:.1%}; {'beats' if wins else 'does not beat'} main's "
          f"({mt[1, 0]}, {ma:.1%})")
    return best, wins


def run_blur11_sweep(side: int) -> None:
    """The candidates' sweep (h68blur11) on :func:`dev_sets`: the tables and the choice."""
    t0 = time.time()
    sets = {}
    for n, (c, b) in dev_sets(side).items():
        sets[n] = blur11_cases(c, b)
        print(f"{n}: {len(sets[n])} cases, {time.time() - t0:.0f} s", flush=True)
    blur11_table(sets, "blur", lambda r: r["lib"][0] >= r["lib"][1] + 5.0)
    blur11_table(sets, "defocus", lambda r: _gain_db(r["post"][0], 0.0) >= 1.5)


# --- round 11, blur and defocus: h68blur11's default on another new set ----------------------

#: Blur widths of round 11 (none used before by either kind: Gaussian σ 0.9-3.4 and disk
#: radii 1.2-4.4 earlier, as listed at :data:`ROUND10_BLUR`, and 1.25, 1.55, 2.1, 2.3, 3.4,
#: 4.4 in round 10).
ROUND11_BLUR = (("blur", 1.05), ("blur", 1.75), ("blur", 2.95),
                ("defocus", 1.65), ("defocus", 2.65), ("defocus", 3.3))


def round11_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 11's generated scenes, (h, w, 3) uint8, seeded (kinds no earlier set has):
    ``"circuit"`` (a green circuit board: copper traces 1-3 px wide along rows and columns,
    round pads 2-4 px, three dark chips a tenth to a fifth of each side), ``"clouds"`` (a
    blue sky behind clouds: a 1/f^1.6 random field through a soft threshold, lit from the
    top) and ``"tiles"`` (a mosaic: 120 Voronoi cells of random colours with 1-px grey grout)."""
    rng = np.random.default_rng({"circuit": 111, "clouds": 112, "tiles": 113}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    if name == "circuit":
        img = np.tile(np.array([0.05, 0.3, 0.12]), (h, w, 1))
        copper = np.array([0.85, 0.6, 0.3])
        for _ in range(60):
            t = int(rng.integers(1, 4))
            if rng.uniform() < 0.5:
                r0, c0, c1 = int(rng.integers(0, h - t)), *sorted(rng.integers(0, w, 2))
                img[r0:r0 + t, c0:c1 + 1] = copper
            else:
                c0, r0, r1 = int(rng.integers(0, w - t)), *sorted(rng.integers(0, h, 2))
                img[r0:r1 + 1, c0:c0 + t] = copper
        for _ in range(80):
            cy, cx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(2, 4)
            img[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = np.array([0.9, 0.9, 0.85])
        for _ in range(3):
            ch, cw = int(rng.integers(h // 10, h // 5)), int(rng.integers(w // 10, w // 5))
            r0, c0 = int(rng.integers(0, h - ch)), int(rng.integers(0, w - cw))
            img[r0:r0 + ch, c0:c0 + cw] = 0.08
    elif name == "clouds":
        f = np.sqrt(np.fft.fftfreq(h)[:, None] ** 2 + np.fft.fftfreq(w)[None] ** 2)
        spec = (rng.standard_normal((h, w)) + 1j * rng.standard_normal((h, w)))
        field = np.real(np.fft.ifft2(spec / np.maximum(f, 1 / max(h, w)) ** 1.6))
        field = (field - field.mean()) / field.std()
        cover = 1 / (1 + np.exp(-3 * (field - 0.3)))
        t = (yy / h)[..., None]
        sky = (1 - t) * np.array([0.2, 0.4, 0.8]) + t * np.array([0.55, 0.7, 0.95])
        cloud = (0.95 - 0.25 * t) * np.ones(3)
        img = (1 - cover[..., None]) * sky + cover[..., None] * cloud
    else:
        pts = rng.uniform(0, 1, (120, 2)) * np.array([h, w])
        d = (yy[..., None] - pts[:, 0]) ** 2 + (xx[..., None] - pts[:, 1]) ** 2
        part = np.partition(np.sqrt(d), 1, axis=-1)
        cols = rng.uniform(0.15, 0.95, (120, 3))
        img = cols[d.argmin(-1)]
        img[part[..., 1] - part[..., 0] < 1.0] = 0.55
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round11_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 11's held-out photos (issue 68, h68blur11; declared after the default was
    chosen and committed, before it ran on it), (3, side·3/4, side) in [0, 1]: images and
    crops used by no earlier set of this benchmark, testbed, test or NIQE's pristine model:
    zoomed windows (about three times the scale of the quarters earlier sets used) of
    ``china`` (rows 0.35-0.6, columns 0.62-0.95), ``flower`` (rows 0.1-0.35, columns
    0.55-0.88) and ``grace_hopper`` (rows 0.55-0.8, columns 0.55-0.88), two 3 × 4 montages
    of ``lfw_subset`` (grey: faces 60-71 and non-face patches 160-171; earlier sets used
    faces 0-59 and patches 100-159) and three generated scenes (:func:`round11_generated`:
    a circuit board and tiles generated at the final size, so that no resizing aliases
    their 1-px traces and grout; clouds)."""
    china, flower, hopper = _colour_samples()
    raw = {"china window": _part(china, (0.35, 0.6), (0.62, 0.95)),
           "flower window": _part(flower, (0.1, 0.35), (0.55, 0.88)),
           "hopper window": _part(hopper, (0.55, 0.8), (0.55, 0.88)),
           "faces 60-71": _lfw_montage(60), "patches 160-171": _lfw_montage(160),
           "clouds": round11_generated("clouds", 300, 400)}
    raw |= {n: round11_generated(n, side * 3 // 4, side) for n in ("circuit", "tiles")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round11_blur(side: int) -> None:
    """Round 11: the library's blur and defocus defaults (whichever ``iclr25`` is imported:
    run once with the branch's, h68blur11's posterior AND re-blur, once with main's,
    ``PYTHONPATH``) on :func:`round11_photos` at :data:`ROUND11_BLUR` with
    :func:`new_blur_outputs`, at margin 0 and at each measure's default margin."""
    from iclr25 import _guard

    print(f"defaults: margins {_guard.MARGINS}, posterior SDs {_guard._POSTERIOR_SDS:g}, "
          f"second score {getattr(MEASURES['posterior'], 'also', None)}")
    blur_margin_report("round 11", new_blur_cases(round11_photos(side), ROUND11_BLUR))


# --- the low-key rule under a power curve (issue 68, walk 7, h68ll12) ------------------------

def _log_position(x: torch.Tensor, q: float) -> torch.Tensor:
    """Where each image's ``q`` quantile of block log-luma lies between its 1st and 99th
    percentiles (0 at the 1st, 1 at the 99th), (B,): a ratio of log-luma differences, so
    any darkening k·x^γ leaves it."""
    from iclr25._guard import _block_log_luma, _rank

    lg = _block_log_luma(x)
    lo, hi = _rank(lg, 0.01), _rank(lg, 0.99)
    return (_rank(lg, q) - lo) / (hi - lo).clamp(min=1e-9)


def lowkey_candidates() -> dict[str, object]:
    """Rules for "low-key" that read only the shape of the log-luma distribution, so a
    darkening k·x^γ leaves them (h68ll12), with main's (None: the library's
    :func:`iclr25._guard.low_key`, invariant to a gain only). Each threshold is a
    definition's: key 0 is middle grey midway between the darkest and the highlights in
    log (Reinhard); Reinhard's low-key key values are 0.09 and below against 0.18 (key
    value 0.18·4^key, so key <= -0.5); "most of it below" the log midpoint by the median
    or the 75th percentile."""
    from iclr25._guard import scene_key

    return {"main": None,
            "key < 0": lambda x: scene_key(x) < 0,
            "key <= -0.5 (Reinhard)": lambda x: scene_key(x) <= -0.5,
            "key < 0, q75 < 0.5": lambda x: (scene_key(x) < 0) & (_log_position(x, 0.75) < 0.5),
            "key < 0, median < 0.5": lambda x: (scene_key(x) < 0)
            & (_log_position(x, 0.5) < 0.5)}


def lowlight_dev_cases(side: int, steps: int, seed: int,
                       gains=None) -> dict[str, list[dict]]:
    """The low-light development sets' records (the first set, ``lowlight-fresh``, rounds
    3, 6, 7, 8 and 9, each as its own ``--set`` builds it; round 8 at 192 px and round 9 at
    256 px as measured), name -> :func:`lowlight_cases` records (with ``gains``)."""
    return {
        "first": lowlight_cases(photos(side), steps, seed, gains=gains),
        "fresh": lowlight_cases(fresh_photos(side), steps, seed, fresh=True, gains=gains),
        "round 3": lowlight_cases(new_photos(side), steps, seed, dark_params=NEW_DARK,
                                  outputs=new_lowlight_outputs, gains=gains),
        "round 6": lowlight_cases(round6_dark_photos(side), steps, seed + 2000,
                                  dark_params=ROUND6_DARK, outputs=round6_lowlight_outputs,
                                  gains=gains),
        "round 7": lowlight_cases(round7_lowlight_photos(side), steps, seed + 3000,
                                  dark_params=ROUND7_DARK, outputs=round7_lowlight_outputs,
                                  gains=gains),
        "round 8": lowlight_cases(round8_lowlight_photos(192), steps, seed + 4000,
                                  dark_params=ROUND8_DARK, outputs=round7_lowlight_outputs,
                                  gains=gains),
        "round 9": lowlight_cases(round9_lowlight_photos(256), steps, seed + 5000,
                                  dark_params=ROUND9_DARK, outputs=round7_lowlight_outputs,
                                  darken=round9_darken, gains=gains)}


def run_lowkey_candidates(side: int, steps: int, seed: int) -> None:
    """Each of :func:`lowkey_candidates` in place of the library's ``low_key`` inside
    ``not_underexposed`` (:func:`_with_rule`), on every development set of
    :func:`lowlight_dev_cases`, at the default margin: warned & worse, warned & better,
    quiet & worse, quiet & better, agreement, and the outputs returned worse than the input
    (h68ll12: every candidate that frees walk 7's darkened ``immunohistochemistry`` returns
    more worse than main's rule; the module docstring of ``iclr25._guard``). Since c82865c
    ``not_underexposed`` reads ``_low_key``, not ``low_key``: patching ``low_key`` (as this
    did until h68ll14) left every candidate main's."""
    from iclr25._guard import MARGINS

    sets = lowlight_dev_cases(side, steps, seed)
    for name, rule in lowkey_candidates().items():
        for kind, recs in _with_rule(sets, rule).items():
            t = _ll_confusion(recs, MARGINS["exposure"])
            print(f"{name:24s} {kind:8s} {_counts(t)}; agreement "
                  f"{np.trace(t) / t.sum():.1%} of {t.sum()}; returned worse {t[1, 0]}")


# --- low light's margin (issue 68, h68ll13): a sweep by a written rule, and round 13 ---------

#: The margins (dB) swept for the exposure PSNR (``--set lowlight-margins``), main's 1 dB
#: among them.
LOWLIGHT_MARGINS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: The margin the rule picks on the development sets (``--set lowlight-margins``: 0.5 dB, 9
#: returned worse of 2,094 pooled, agreement 71.5%); round 13 is judged at it and at main's
#: 1 dB.
LOWLIGHT_MARGIN_PICK: float | None = 0.5


def _ll_confusion(recs: list[dict], margin: float) -> np.ndarray:
    """The default's 2×2 counts on low-light records at ``margin``: rows warned (the input
    returned) / quiet (ours returned: ours scores at least ``margin`` above the input and
    the input is judged, as ``guarded`` does; NaN clears no margin), columns worse / better
    than the input by the reference."""
    t = np.zeros((2, 2), int)
    for r in recs:
        o, i, _ = r["ref"]
        so, si, _ = r["new"]
        t[int(bool(so >= si + margin) and not r.get("why")), int(o >= i)] += 1
    return t


def rule_table(label: str, sets: dict[str, list[dict]], cands, confusion, name, tie):
    """Print, per candidate, each set's and the pooled counts (warned & worse / warned &
    better / quiet & worse / quiet & better: ``confusion(recs, c)``), agreement and outputs
    returned worse; return the candidate a margin rule picks: the fewest returned worse
    pooled, then the highest pooled agreement, then the least ``tie(c)`` (a tuple)."""
    best, key = None, None
    for c in cands:
        pooled, cells = np.zeros((2, 2), int), []
        for n, recs in sets.items():
            t = confusion(recs, c)
            pooled += t
            cells.append(f"{n} {t[0, 0]}/{t[0, 1]}/{t[1, 0]}/{t[1, 1]} "
                         f"{np.trace(t) / t.sum():.1%} ({t[1, 0]})")
        a = float(np.trace(pooled) / pooled.sum())
        print(f"{label}, {name(c)}: pooled {pooled[0, 0]}/{pooled[0, 1]}/{pooled[1, 0]}/"
              f"{pooled[1, 1]} of {pooled.sum()}, agreement {a:.1%}, returned worse "
              f"{pooled[1, 0]}; " + "; ".join(cells))
        k = (int(pooled[1, 0]), -round(a, 12), *tie(c))
        if key is None or k < key:
            best, key = c, k
    print(f"{label}: the rule picks {name(best)}")
    return best


def lowlight_margin_table(sets: dict[str, list[dict]],
                          margins: tuple[float, ...] = LOWLIGHT_MARGINS) -> float:
    """:func:`rule_table` of low light's margins: ties to the larger margin."""
    return rule_table("low light", sets, margins, _ll_confusion, lambda m: f"margin {m:g} dB",
                      lambda m: (-m,))

def run_lowlight_margins(side: int, steps: int, seed: int) -> None:
    """Low light's margin swept on :func:`lowlight_dev_cases` by the rule in the module's
    docstring (h68ll13): :func:`lowlight_margin_table`."""
    lowlight_margin_table(lowlight_dev_cases(side, steps, seed))


#: Darkenings of round 13 (:func:`round9_darken`'s kind; none used before): a camera 4.9
#: stops under (× 1/30) in linear light, 1200 photons at linear white (40 after the
#: exposure), read σ 0.002; on the encoded values a shallow curve (k 0.15, γ 1.2, 150
#: photons, read σ 0.006) and a steep one (k 0.25, γ 2.3, 400 photons, read σ 0.01). All
#: written to 8 bits.
ROUND13_DARK = ({"space": "camera", "k": 1 / 30, "lam": 1200.0, "read_sigma": 0.002},
                {"space": "display", "k": 0.15, "gamma": 1.2, "lam": 150.0,
                 "read_sigma": 0.006},
                {"space": "display", "k": 0.25, "gamma": 2.3, "lam": 400.0,
                 "read_sigma": 0.01})

#: Round 13's photos by kind (:func:`round13_lowlight_photos`).
ROUND13_KINDS = {"typical": ("china lake window", "flower bud window", "hopper flag window",
                             "faces 72-83", "patches 172-183", "harbour", "orchard",
                             "quilt"),
                 "dark": ("fireworks", "rainy dusk", "hubble centre window")}


def round13_lowlight_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 13's generated scenes, (h, w, 3) uint8, seeded (none like an earlier one):
    typical ``"harbour"`` (a pale sky over a textured sea at 0.25-0.4 with ten hulls of
    random colour at 0.2-0.8 and a quay at 0.55), ``"orchard"`` (a sky over a green
    hillside with texture and 12 trees carrying red fruit), ``"quilt"`` (a 6 × 8
    patchwork of textured squares of random colour at 0.15-0.85); dark by design
    ``"fireworks"`` (a sky at 0.01-0.02 with five bursts of thin bright rays: low-key)
    and ``"rainy dusk"`` (a dim street and sky at 0.05-0.2 with rain streaks and a few
    windows at 0.3: dim throughout, not low-key)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"harbour": 131, "orchard": 132, "quilt": 133,
                                 "fireworks": 134, "rainy dusk": 135}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    tex = gaussian_filter(rng.standard_normal((h, w)), 2)
    if name == "harbour":
        img = np.where((yy < 0.45 * h)[..., None], (0.8 - 0.15 * yy / h)[..., None]
                       * np.array([0.85, 0.9, 1.0]),
                       (0.32 + 0.08 * tex)[..., None] * np.array([0.5, 0.8, 1.0]))
        for _ in range(10):
            x0, y0 = rng.integers(0, w - w // 8), rng.integers(int(0.45 * h), int(0.7 * h))
            img[y0:y0 + h // 14, x0:x0 + w // 8] = rng.uniform(0.2, 0.8, 3)
        img[int(0.8 * h):] = 0.55 + 0.04 * tex[int(0.8 * h):, :, None]
    elif name == "orchard":
        img = np.where((yy < (0.3 + 0.05 * np.cos(xx / w * 4)) * h)[..., None],
                       np.array([0.72, 0.82, 0.95]),
                       ((0.4 + 0.1 * tex) * (0.7 + 0.3 * yy / h))[..., None]
                       * np.array([0.55, 0.9, 0.35]))
        for _ in range(12):
            cx, cy = rng.uniform(0, w), rng.uniform(0.35, 0.8) * h
            crown = (xx - cx) ** 2 + (yy - cy) ** 2 < (w / 20) ** 2
            img[crown] = np.array([0.12, 0.32, 0.1]) * (1 + tex[crown, None])
            fruit = crown & (rng.random((h, w)) < 0.03)
            img[fruit] = np.array([0.85, 0.12, 0.1])
    elif name == "quilt":
        img = np.zeros((h, w, 3))
        for r in range(6):
            for c in range(8):
                img[r * h // 6:(r + 1) * h // 6, c * w // 8:(c + 1) * w // 8] = \
                    rng.uniform(0.15, 0.85, 3)
        img *= (1 + 0.15 * tex)[..., None]
    elif name == "fireworks":
        img = (0.01 + 0.01 * (1 + tex) / 2)[..., None] * np.array([0.7, 0.8, 1.2])
        for _ in range(5):
            cy, cx = rng.uniform(0.1, 0.6) * h, rng.uniform(0.1, 0.9) * w
            col, rad = rng.uniform(0.6, 1.0, 3), rng.uniform(0.05, 0.12) * w
            for ang in rng.uniform(0, 2 * np.pi, 24):
                d = np.abs((yy - cy) * np.cos(ang) - (xx - cx) * np.sin(ang))
                along = (yy - cy) * np.sin(ang) + (xx - cx) * np.cos(ang)
                ray = (d < 0.8) & (along > 0) & (along < rad)
                img[ray] = col
    else:
        img = np.where((yy < 0.4 * h)[..., None], (0.16 - 0.05 * yy / h)[..., None]
                       * np.array([0.85, 0.9, 1.1]),
                       (0.1 + 0.03 * tex)[..., None] * np.array([0.9, 0.95, 1.0]))
        for _ in range(6):
            y0, x0 = rng.integers(int(0.45 * h), int(0.8 * h)), rng.integers(0, w - w // 25)
            img[y0:y0 + h // 25, x0:x0 + w // 30] = np.array([0.32, 0.28, 0.2])
        img += 0.04 * (np.abs(((xx + 0.3 * yy) % 23) - 11) < 0.5)[..., None]
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round13_lowlight_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 13's held-out photos (issue 68, h68ll13; declared and committed with the margin
    rule, before the sweep ran and before anything ran on them), (3, side·3/4, side) in
    [0, 1]; run at a user's size (``--side 256``). 11 images and crops used by no earlier
    set, testbed, test, walk or NIQE's pristine model:

    * typical (8): zoomed windows at places no set used (about three times the scale of
      the quarters) of ``china`` (rows 0.6-0.9, columns 0.45-0.85: trees by the lake),
      ``flower`` (rows 0.6-0.95, columns 0.4-0.8: the second bloom in the bokeh) and
      ``grace_hopper`` (rows 0-0.3, columns 0-0.4: the flag), two 3 × 4 montages of
      scikit-image's ``lfw_subset`` (grey: faces 72-83 and non-face patches 172-183;
      earlier sets used faces 0-71 and patches 100-171) and three generated scenes
      (:func:`round13_lowlight_generated`: a harbour, an orchard, a quilt);
    * dark by design (3): generated fireworks (low-key), a generated rainy dusk (dim
      throughout, not low-key) and a zoomed window of ``hubble_deep_field`` (rows
      0.3-0.55, columns 0.35-0.68: a star field; earlier sets used its centre crop whole
      and its quarters).

    Grey photos (three equal channels, for the tint check): both montages."""
    import skimage.data

    china, flower, hopper = _colour_samples()
    raw = {"china lake window": _part(china, (0.6, 0.9), (0.45, 0.85)),
           "flower bud window": _part(flower, (0.6, 0.95), (0.4, 0.8)),
           "hopper flag window": _part(hopper, (0, 0.3), (0, 0.4)),
           "faces 72-83": _lfw_montage(72), "patches 172-183": _lfw_montage(172)}
    raw |= {n: round13_lowlight_generated(n, 300, 400) for n in ("harbour", "orchard",
                                                                 "quilt", "fireworks",
                                                                 "rainy dusk")}
    raw["hubble centre window"] = _part(skimage.data.hubble_deep_field(), (0.3, 0.55),
                                        (0.35, 0.68))
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round13_lowlight(side: int, steps: int, seed: int) -> None:
    """Round 13: low light on :func:`round13_lowlight_photos` darkened by
    :data:`ROUND13_DARK` (:func:`round9_darken`) with round 7's outputs and the network,
    scored once and judged at main's 1 dB and at :data:`LOWLIGHT_MARGIN_PICK`: the counts,
    per kind, the outputs returned worse; which reason each input got; the tint check on
    grey photos; ``fallback="classical"``'s switches."""
    if LOWLIGHT_MARGIN_PICK is None:
        raise SystemExit("round 13 is judged at the sweep's pick: run --set "
                         "lowlight-margins and set LOWLIGHT_MARGIN_PICK first")
    recs = lowlight_cases(round13_lowlight_photos(side), steps, seed + 6000,
                          dark_params=ROUND13_DARK, outputs=round7_lowlight_outputs,
                          darken=round9_darken)
    for m in dict.fromkeys((1.0, LOWLIGHT_MARGIN_PICK)):
        t = _ll_confusion(recs, m)
        print(f"low light, round 13, margin {m:g}: {t[0, 0]}/{t[0, 1]}/{t[1, 0]}/{t[1, 1]} "
              f"of {t.sum()}, agreement {np.trace(t) / t.sum():.1%}, returned worse {t[1, 0]}")
        kind_report(f"low light, round 13, margin {m:g}", recs, ROUND13_KINDS, m)
        for r in recs:
            if _ll_confusion([r], m)[1, 0]:
                print(f"  returned worse: {r['case']} / {r['out']}: reference "
                      f"{r['ref'][0]:.2f} vs {r['ref'][1]:.2f} dB, measure "
                      f"{r['new'][0]:.2f} vs {r['new'][1]:.2f}")
    for name in dict.fromkeys(r["case"] for r in recs):
        r = next(r for r in recs if r["case"] == name)
        print(f"  {name}: {r['why'] or 'judged'}")
    colour_report("low light, round 13", recs)
    fallback_report("low light, round 13", recs)


# --- low-key with a spatial condition (issue 68, h68ll14): candidates by a written rule, round 14 -

#: Near black against the highlights: Zone I of Adams' zone system, four stops (1/16) under
#: middle grey's 18% reflectance, 0.18/16 of white in linear light, in sRGB (the luma's
#: encoding; :data:`iclr25._guard.MIDDLE_GREY` is middle grey so written):
#: 1.055 · 0.01125^(1/2.4) − 0.055.
NEAR_BLACK = 0.108
#: The brightest blocks whose surroundings :func:`highlight_isolation` reads: the highlights
#: as ``iclr25._guard`` defines them everywhere (at or above the 99th percentile).
HIGHLIGHT_TOP = 0.01


def _block_grid(x: torch.Tensor) -> torch.Tensor:
    """:func:`iclr25._guard._block_log_luma` as a grid, (B, 1, H/4, W/4) float64."""
    from iclr25._guard import KEY_BLOCK, _block_log_luma

    H, W = x.shape[-2:]
    b = KEY_BLOCK if min(H, W) >= KEY_BLOCK else 1
    return _block_log_luma(x).reshape(len(x), 1, H // b, W // b)


def near_black_fraction(x: torch.Tensor) -> torch.Tensor:
    """The fraction of each image's area (4-px blocks, :func:`iclr25._guard._block_log_luma`)
    at or under :data:`NEAR_BLACK` times its highlights (99th percentile), (B,): a night sky
    or objects on black lie mostly there, a dark-toned typical scene (navy, forest) mostly
    above. A ratio to the image's own highlights: invariant to a gain; a power curve
    ``k·x^γ`` (γ > 1) pushes more of it under (towards keeping the input). ``x``: (B, 3, H,
    W)."""
    from iclr25._guard import _block_log_luma, _rank

    lg = _block_log_luma(x)
    thr = _rank(lg, 0.99) + math.log(NEAR_BLACK)
    return (lg <= thr[:, None]).double().mean(1)


def highlight_isolation(x: torch.Tensor) -> torch.Tensor:
    """Whether each image's highlights sit on a dark field, (B,): the fraction of the 8
    neighbours (inside the frame) of its brightest :data:`HIGHLIGHT_TOP` of 4-px blocks
    (:func:`iclr25._guard._block_log_luma`) that lie below
    :data:`iclr25._guard.MIDDLE_GREY` with that block at white (under 0.461 of it: the
    meter's middle grey against white, as ``low_key``'s second half). Highlights in compact
    blobs on a dark field (a night sky, objects on black, a lit window at night) are
    surrounded by such darkness; highlights spread through a typical scene (a sky, a lit
    wall, white stripes) by tones near their own. Log differences: invariant to a gain; a
    power curve ``k·x^γ`` (γ > 1) stretches them (towards keeping the input).
    ``x``: (B, 3, H, W)."""
    import torch.nn.functional as F

    from iclr25._guard import MIDDLE_GREY, _rank

    g = _block_grid(x)
    flat = g.flatten(1)
    top = flat >= _rank(flat, 1 - HIGHLIGHT_TOP)[:, None]            # (B, N)
    nb = F.unfold(F.pad(g, (1, 1, 1, 1), value=math.inf), 3)        # (B, 9, N)
    nb = torch.cat([nb[:, :4], nb[:, 5:]], 1)                        # the 8 neighbours
    dark = (nb < flat[:, None] + math.log(MIDDLE_GREY)).double()
    valid = torch.isfinite(nb).double()
    t = top[:, None].double()
    return (dark * t).sum((1, 2)) / (valid * t).sum((1, 2)).clamp(min=1)


def lowkey_spatial_candidates() -> dict[str, object]:
    """Rules for ``low_key`` (used inside ``not_underexposed``) that add a spatial condition
    to main's (h68ll14), each a function of the input image only; main's (None: the
    library's :func:`iclr25._guard.low_key`) is a candidate too. Constants from definitions
    (:data:`NEAR_BLACK`: Zone I; middle grey against white; 1/2: most of the area, most of
    the neighbours)."""
    from iclr25._guard import low_key

    return {"main": None,
            "main & near-black area >= 1/2":
                lambda x: low_key(x) & (near_black_fraction(x) >= 0.5),
            "main & highlights on the dark half":
                lambda x: low_key(x) & (highlight_isolation(x) > 0.5),
            "main & (either)":
                lambda x: low_key(x) & ((near_black_fraction(x) >= 0.5)
                                        | (highlight_isolation(x) > 0.5))}


def lowkey_spatial_dev_cases(side: int, steps: int, seed: int) -> dict[str, list[dict]]:
    """:func:`lowlight_dev_cases` and round 13 (development since h68ll13's result, at 256 px
    as measured): name -> :func:`lowlight_cases` records."""
    return lowlight_dev_cases(side, steps, seed) | {
        "round 13": lowlight_cases(round13_lowlight_photos(256), steps, seed + 6000,
                                   dark_params=ROUND13_DARK,
                                   outputs=round7_lowlight_outputs, darken=round9_darken)}


def _with_rule(sets: dict[str, list[dict]], rule) -> dict[str, list[dict]]:
    """The records of ``sets`` with ``why`` re-read by ``not_underexposed`` with ``rule``
    (image (1, 3, H, W) -> (1,) bool) as its low-key test in place of the library's
    (None: the library's): the rule's verdict is read first, then handed to
    ``not_underexposed`` in place of ``_low_key``'s, so its order of reasons is kept."""
    from unittest import mock

    from iclr25 import _guard

    out = {}
    for name, recs in sets.items():
        why = {}
        for r in recs:
            if r["case"] in why:
                continue
            x = r["x"][None]
            if rule is None:
                why[r["case"]] = _guard.not_underexposed(x)[0]
                continue
            low = rule(x)
            with mock.patch.object(_guard, "_low_key", lambda lg, key, low=low: low):
                why[r["case"]] = _guard.not_underexposed(x)[0]
        out[name] = [r | {"why": why[r["case"]]} for r in recs]
    return out


def lowkey_spatial_table(sets: dict[str, list[dict]], cands: dict[str, object]) -> str:
    """Print, per candidate, the pooled and per-set counts at the default margin (warned &
    worse / warned & better / quiet & worse / quiet & better), agreement and outputs
    returned worse; return the candidate the rule picks: the fewest returned worse pooled,
    then the highest pooled agreement, ties to main (listed first)."""
    from iclr25._guard import MARGINS

    m = MARGINS["exposure"]
    best, key = None, None
    for name, rule in cands.items():
        judged = _with_rule(sets, rule)
        pooled, cells = np.zeros((2, 2), int), []
        for s, recs in judged.items():
            t = _ll_confusion(recs, m)
            pooled += t
            cells.append(f"{s} {t[0, 0]}/{t[0, 1]}/{t[1, 0]}/{t[1, 1]} "
                         f"{np.trace(t) / t.sum():.1%} ({t[1, 0]})")
        a = float(np.trace(pooled) / pooled.sum())
        print(f"low-key {name}: pooled {pooled[0, 0]}/{pooled[0, 1]}/{pooled[1, 0]}/"
              f"{pooled[1, 1]} of {pooled.sum()}, agreement {a:.1%}, returned worse "
              f"{pooled[1, 0]}; " + "; ".join(cells), flush=True)
        k = (int(pooled[1, 0]), -round(a, 12))
        if key is None or k < key:
            best, key = name, k
    print(f"low-key: the rule picks {best!r}")
    return best


def run_lowkey_spatial(side: int, steps: int, seed: int) -> None:
    """The candidates of :func:`lowkey_spatial_candidates` on
    :func:`lowkey_spatial_dev_cases` by the rule in the module's docstring (h68ll14):
    :func:`lowkey_spatial_table`."""
    lowkey_spatial_table(lowkey_spatial_dev_cases(side, steps, seed),
                         lowkey_spatial_candidates())


#: The candidate ``--set lowkey-spatial``'s rule picks (a name of
#: :func:`lowkey_spatial_candidates`): main's rule (9 returned worse of 2,490 pooled, 71.7%;
#: the spatial candidates 16-24, 76.4-77.1%). Round 14 is judged with it and with main's.
LOWKEY_SPATIAL_PICK: str | None = "main"

#: Darkenings of round 14 (:func:`round9_darken`'s kind; none used before): a camera 5.3
#: stops under (× 1/40) in linear light, 1500 photons at linear white, read σ 0.0025; on
#: the encoded values a middle curve (k 0.12, γ 1.5, 200 photons, read σ 0.007) and a steep
#: one (k 0.3, γ 2.0, 350 photons, read σ 0.012). All written to 8 bits.
ROUND14_DARK = ({"space": "camera", "k": 1 / 40, "lam": 1500.0, "read_sigma": 0.0025},
                {"space": "display", "k": 0.12, "gamma": 1.5, "lam": 200.0,
                 "read_sigma": 0.007},
                {"space": "display", "k": 0.3, "gamma": 2.0, "lam": 350.0,
                 "read_sigma": 0.012})

#: Round 14's photos by kind (:func:`round14_lowlight_photos`).
ROUND14_KINDS = {"typical": ("china roof window", "flower edge window", "hopper uniform window",
                             "faces 84-95", "patches 184-195", "navy room", "forest",
                             "dusk interior"),
                 "dark": ("night sky", "objects on black", "lit window at night")}


def _r14_typical(name: str, rng, yy, xx, tex, h: int, w: int) -> np.ndarray:
    """Round 14's generated dark-toned typical scenes (:func:`round14_lowlight_generated`)."""
    if name == "navy room":
        img = (1 + 0.1 * tex)[..., None] * np.array([0.12, 0.16, 0.36])
        img[int(0.12 * h):int(0.5 * h), int(0.08 * w):int(0.32 * w)] = \
            np.array([0.82, 0.86, 0.9])                          # a window (daylight)
        img[int(0.7 * h):] = ((0.42 + 0.06 * tex[int(0.7 * h):])[..., None]
                              * np.array([1.0, 0.72, 0.45]))       # a wooden floor
        for _ in range(4):                                       # pictures, a sofa
            y0, x0 = rng.integers(int(0.2 * h), int(0.55 * h)), rng.integers(int(0.4 * w),
                                                                             w - w // 8)
            img[y0:y0 + h // 7, x0:x0 + w // 9] = rng.uniform(0.25, 0.7, 3)
    elif name == "forest":
        img = ((0.22 + 0.1 * tex) * (0.8 + 0.4 * yy / h))[..., None] * np.array([0.45, 1.0,
                                                                                 0.4])
        for _ in range(9):                                       # trunks
            x0 = rng.integers(0, w - w // 30)
            img[:int(0.85 * h), x0:x0 + w // 30] = np.array([0.26, 0.18, 0.11])
        fleck = gaussian_blur2(rng.random((h, w)), 3) > 0.62      # sun flecks, in patches
        img[fleck] = np.array([0.78, 0.84, 0.55])
        img[int(0.85 * h):] = np.array([0.36, 0.42, 0.2]) * (1 + 0.2 * tex[int(0.85 * h):,
                                                                           :, None])
    else:                                                        # dusk interior
        cy, cx = 0.35 * h, 0.7 * w                               # a lamp lights the room
        fall = 1 / (1 + ((yy - cy) ** 2 + (xx - cx) ** 2) / (0.25 * w) ** 2)
        img = (0.12 + 0.7 * fall)[..., None] * np.array([1.0, 0.82, 0.6])
        img[int(0.15 * h):int(0.45 * h), int(0.05 * w):int(0.3 * w)] = \
            np.array([0.3, 0.28, 0.45])                          # a window at dusk
        for _ in range(5):                                       # furniture
            y0, x0 = rng.integers(int(0.5 * h), int(0.8 * h)), rng.integers(0, w - w // 6)
            img[y0:y0 + h // 6, x0:x0 + w // 6] *= rng.uniform(0.5, 1.2, 3)
        img *= (1 + 0.08 * tex)[..., None]
    return img


def gaussian_blur2(a: np.ndarray, s: float) -> np.ndarray:
    """``a`` blurred by a Gaussian of σ ``s`` px and rescaled to [0, 1]."""
    from scipy.ndimage import gaussian_filter

    b = gaussian_filter(a, s)
    return (b - b.min()) / max(b.max() - b.min(), 1e-12)


def round14_lowlight_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 14's generated scenes, (h, w, 3) uint8, seeded (none like an earlier one):
    dark-toned typical ``"navy room"`` (navy walls with a daylit window, a wooden floor,
    pictures), ``"forest"`` (a dark green understorey, trunks, patches of sunlight, moss) and
    ``"dusk interior"`` (a room lit by one lamp, falling off to 0.12, a dusk window,
    furniture); dark by design ``"night sky"`` (a sky at 0.01-0.03 with 150 stars, a moon
    and a black hill), ``"objects on black"`` (four shaded fruit on black velvet) and
    ``"lit window at night"`` (a brick facade at 0.02-0.05 under a black sky, one lit window
    and a street lamp)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng({"navy room": 141, "forest": 142, "dusk interior": 143,
                                 "night sky": 144, "objects on black": 145,
                                 "lit window at night": 146}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    tex = gaussian_filter(rng.standard_normal((h, w)), 2)
    if name in ("navy room", "forest", "dusk interior"):
        img = _r14_typical(name, rng, yy, xx, tex, h, w)
    elif name == "night sky":
        img = (0.01 + 0.02 * yy / h)[..., None] * np.array([0.7, 0.8, 1.2])
        ys, xs = rng.integers(0, h, 150), rng.integers(0, w, 150)
        img[ys, xs] = rng.uniform(0.5, 1.0, (150, 1)) * np.array([1.0, 1.0, 0.95])
        moon = (yy - 0.2 * h) ** 2 + (xx - 0.75 * w) ** 2 < (w / 25) ** 2
        img[moon] = np.array([0.92, 0.9, 0.82])
        img[yy > (0.8 + 0.06 * np.sin(xx / w * 5)) * h] = 0.005
    elif name == "objects on black":
        img = (0.01 + 0.004 * tex)[..., None] * np.ones(3)
        for _ in range(4):
            cy, cx = rng.uniform(0.3, 0.7) * h, rng.uniform(0.15, 0.85) * w
            ry, rx = rng.uniform(0.07, 0.12) * h, rng.uniform(0.05, 0.09) * w
            r2 = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2
            shade = np.clip(1.1 - 0.6 * ((yy - cy + 0.4 * ry) ** 2 + (xx - cx + 0.4 * rx) ** 2)
                            / (ry * rx), 0.2, 1)               # lit from the upper left
            img[r2 < 1] = rng.uniform(0.5, 0.95, 3) * shade[r2 < 1, None]
    else:                                                        # lit window at night
        img = np.where((yy < 0.25 * h)[..., None], 0.012,
                       (0.035 + 0.015 * tex)[..., None] * np.array([1.0, 0.8, 0.7]))
        img[int(0.45 * h):int(0.62 * h), int(0.4 * w):int(0.52 * w)] = \
            np.array([0.95, 0.85, 0.6])
        lamp = (yy - 0.55 * h) ** 2 + (xx - 0.12 * w) ** 2
        img += (0.8 * np.exp(-lamp / (2 * (0.02 * w) ** 2)))[..., None] * np.array([1.0, 0.9,
                                                                                    0.6])
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round14_lowlight_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 14's held-out photos (issue 68, h68ll14; declared and committed after the
    candidates and rule of ``--set lowkey-spatial`` and before its table ran), (3, side·3/4,
    side) in [0, 1]; run at a user's size (``--side 256``). 11 images and crops used by no
    earlier set, testbed, test, walk (walk 9 used ``lfw_subset``'s faces 0-15) or NIQE's
    pristine model:

    * typical (8): zoomed windows at places no set used of ``china`` (rows 0.1-0.35,
      columns 0.05-0.4: the temple roof against the sky), ``flower`` (rows 0.3-0.6,
      columns 0.6-0.95: a bloom's edge on dark green bokeh) and ``grace_hopper`` (rows
      0.45-0.8, columns 0.45-0.95: collar, navy uniform, blue backdrop),
      two 3 × 4 montages of ``lfw_subset`` (grey: faces 84-95 and non-face patches 184-195;
      earlier sets used faces 0-83 and patches 100-183) and three generated dark-toned
      scenes (:func:`round14_lowlight_generated`: a navy room, a forest, a dusk interior);
    * dark by design (3, generated): a night sky, objects on black, a lit window at night.

    Grey photos (three equal channels, for the tint check): both montages."""
    china, flower, hopper = _colour_samples()
    raw = {"china roof window": _part(china, (0.1, 0.35), (0.05, 0.4)),
           "flower edge window": _part(flower, (0.3, 0.6), (0.6, 0.95)),
           "hopper uniform window": _part(hopper, (0.45, 0.8), (0.45, 0.95)),
           "faces 84-95": _lfw_montage(84), "patches 184-195": _lfw_montage(184)}
    raw |= {n: round14_lowlight_generated(n, 300, 400)
            for n in ("navy room", "forest", "dusk interior", "night sky", "objects on black",
                      "lit window at night")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def _round14_report(label: str, recs: list[dict]) -> None:
    """Round 14's counts at the default margin, per kind, the outputs returned worse and
    each input's reason, for records judged by one rule."""
    from iclr25._guard import MARGINS

    m = MARGINS["exposure"]
    t = _ll_confusion(recs, m)
    print(f"{label}: {t[0, 0]}/{t[0, 1]}/{t[1, 0]}/{t[1, 1]} of {t.sum()}, agreement "
          f"{np.trace(t) / t.sum():.1%}, returned worse {t[1, 0]}")
    kind_report(label, recs, ROUND14_KINDS, m)
    for r in recs:
        if _ll_confusion([r], m)[1, 0]:
            print(f"  returned worse: {r['case']} / {r['out']}: reference {r['ref'][0]:.2f} "
                  f"vs {r['ref'][1]:.2f} dB, measure {r['new'][0]:.2f} vs {r['new'][1]:.2f}")
    for name in dict.fromkeys(r["case"] for r in recs):
        r = next(r for r in recs if r["case"] == name)
        print(f"  {name}: {r['why'] or 'judged'}")


def run_round14_lowlight(side: int, steps: int, seed: int) -> None:
    """Round 14: low light on :func:`round14_lowlight_photos` darkened by
    :data:`ROUND14_DARK` (:func:`round9_darken`) with round 7's outputs and the network,
    scored once and judged with main's ``low_key`` and with :data:`LOWKEY_SPATIAL_PICK`'s
    (:func:`_with_rule`): the counts, per kind, the outputs returned worse, each input's
    reason; the tint check on grey photos and ``fallback="classical"``'s switches."""
    if LOWKEY_SPATIAL_PICK is None:
        raise SystemExit("round 14 is judged with the candidates' pick: run --set "
                         "lowkey-spatial and set LOWKEY_SPATIAL_PICK first")
    recs = lowlight_cases(round14_lowlight_photos(side), steps, seed + 7000,
                          dark_params=ROUND14_DARK, outputs=round7_lowlight_outputs,
                          darken=round9_darken)
    cands = lowkey_spatial_candidates()
    for name in dict.fromkeys(("main", LOWKEY_SPATIAL_PICK)):
        judged = _with_rule({"round 14": recs}, cands[name])["round 14"]
        _round14_report(f"low light, round 14, low_key {name}", judged)
    colour_report("low light, round 14", recs)
    fallback_report("low light, round 14", recs)


# --- low light's exposure across plausible keys (issue 68, h68ll15): candidates, round 15 ------

#: The darkest level 8 bits encode above black: the floor of the log-average luma
#: (:func:`log_average`), so a black pixel does not send the log to -inf.
LOG_FLOOR = 1 / 255


def log_average(x: torch.Tensor) -> torch.Tensor:
    """Each image's log-average luma (Reinhard's key value), ``exp mean log max(L,
    :data:`LOG_FLOOR`)``, L the BT.601 luma: (B, 3, H, W) -> (B,) float64."""
    from iclr25._guard import _luma_map

    return _luma_map(x).flatten(1).clamp(min=LOG_FLOOR).log().mean(1).exp()


def _tone_log_average(t: torch.Tensor) -> float:
    """:func:`log_average` of a tone distribution ``t`` (its quantiles, (TONE_LEVELS,))."""
    return float(t.clamp(min=LOG_FLOOR).log().mean().exp())


def pristine_tones() -> dict[str, torch.Tensor]:
    """Each :data:`iclr25._guard.PRISTINE` photo's own luma quantiles (``_tones``), name ->
    (TONE_LEVELS,) float64, and the pooled ones (``natural_tones``) as ``"pooled"``."""
    from iclr25._guard import PRISTINE, _tones, natural_tones
    from iclr25.datasets.images import load_image

    return {n: _tones(load_image(n).double()[None])[0] for n in PRISTINE} | {
        "pooled": natural_tones()}


def pristine_keys() -> dict[str, float]:
    """Each PRISTINE photo's log-average luma (:func:`log_average`; 0.227 astronaut to 0.464
    gravel), name -> float."""
    from iclr25._guard import PRISTINE
    from iclr25.datasets.images import load_image

    return {n: float(log_average(load_image(n).double()[None])) for n in PRISTINE}


def keyed_tones() -> dict[str, torch.Tensor]:
    """The pooled tones (``natural_tones``) put by a power curve ``t^γ`` at each PRISTINE
    photo's log-average (``γ = log L̄_j / log L̄_pooled``), and the pooled tones themselves
    (``"pooled"``): name -> (TONE_LEVELS,) float64."""
    from iclr25._guard import natural_tones

    t = natural_tones()
    lp = math.log(_tone_log_average(t))
    return {n: t.clamp(min=0) ** (math.log(k) / lp) for n, k in pristine_keys().items()} | {
        "pooled": t}


def _worst_gain(ideals: dict[str, torch.Tensor]):
    """The gain (dB) of an output over its input by ``lowlight_psnr``'s terms (tone error,
    colour cast, noise) with the tones scored against each of ``ideals``, the least over
    them: f(o, y) -> (B,) float64, o and y (B, 3, H, W)."""
    from iclr25._guard import _tones, colour_cast, noise_sigma

    ref = torch.stack(list(ideals.values()))                     # (M, TONE_LEVELS)

    def score(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = z.detach().cpu().double()
        t2 = (_tones(z)[:, None] - ref[None]).pow(2).mean(-1)     # (B, M)
        rest = colour_cast(z, y) ** 2 + noise_sigma(z).cpu() ** 2
        return 10 * torch.log10(1 / (t2 + rest[:, None]).clamp(min=1e-10))

    def gain(o: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (score(o, y) - score(y, y)).min(1).values

    return gain


def _main_gain(o: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Main's gain (dB): ``lowlight_psnr`` of the output minus the input's."""
    from iclr25._guard import lowlight_psnr

    return lowlight_psnr(o, y) - lowlight_psnr(y, y)


def key_range_candidates() -> dict[str, object]:
    """The candidates of ``--set lowlight-key-range`` (module docstring; h68ll15): name ->
    gain f(o, y) in dB, each a function of the output and the input only; main's first."""
    keys = pristine_keys()
    lo, hi = min(keys.values()), max(keys.values())

    def bounded(o: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        k = log_average(o)
        return torch.where((k >= lo) & (k <= hi), _main_gain(o, y),
                           torch.full_like(k, -math.inf))

    return {"main": _main_gain,
            "(a) pristine tones, worst case": _worst_gain(pristine_tones()),
            "(a') pooled tones at the pristine keys, worst case": _worst_gain(keyed_tones()),
            "(c) bounded brightening": bounded}


#: Walk 10's darkening (issue 68, /work/runs/h68walk10/files/make_images.py): ``Poisson(λ ·
#: k · c · J^γ)/λ + N(0, σ_r²)``, clipped, 8 bits; ``c`` a cool cast per channel.
WALK10_DARK = {"k": 0.12, "cast": (0.6, 0.85, 1.0), "gamma": 1.1, "lam": 400.0,
               "read_sigma": 0.003}


def walk10_darken(J: torch.Tensor, p: dict, seed: int) -> torch.Tensor:
    """``J`` (3, h, w) in [0, 1] darkened walk 10's way by ``p`` (:data:`WALK10_DARK`'s
    keys), numpy's generator seeded by ``seed`` drawn in (h, w, 3) order as the walk did;
    float64, 8 bits."""
    r = np.random.default_rng(seed)
    lin = np.clip(J.permute(1, 2, 0).numpy(), 0, 1) ** p["gamma"] * p["k"] * np.array(p["cast"])
    d = np.clip(r.poisson(lin * p["lam"]) / p["lam"] + p["read_sigma"]
                * r.standard_normal(lin.shape), 0, 1)
    return torch.from_numpy((d * 255).round() / 255).permute(2, 0, 1).contiguous()


def _walk10_voronoi(seed: int) -> np.ndarray:
    """Walk 10's Voronoi mosaic (96 × 96 × 3 in [0, 1]): 25 cells of random colour, dark
    borders."""
    r = np.random.default_rng(seed)
    pts, cols = r.uniform(0, 96, (25, 2)), r.uniform(0.1, 0.95, (25, 3))
    yy, xx = np.mgrid[:96, :96]
    dist = (yy[..., None] - pts[:, 0]) ** 2 + (xx[..., None] - pts[:, 1]) ** 2
    img = cols[dist.argmin(-1)]
    edge = np.sort(dist, -1)
    img[(np.sqrt(edge[..., 1]) - np.sqrt(edge[..., 0])) < 1.2] = 0.05
    return img


def walk10_photos() -> dict[str, tuple[torch.Tensor, torch.Tensor, int]]:
    """Walk 10's 8 + 3 clean images (96 × 96, as its make_images.py makes them): 192-px
    crops of ``immunohistochemistry`` and ``cell``, ``microaneurysms`` whole, resized to
    96, and Voronoi mosaics; name -> (the reference as the walk wrote it, 8 bits; the
    image it darkened, before 8 bits; both (3, 96, 96) float64; its darkening seed)."""
    import skimage.data as d
    from skimage.transform import resize

    def rgb(a):
        return np.repeat(a[..., None], 3, -1) if a.ndim == 2 else a

    def crop(im, y, x, s=192):
        return resize(rgb(im)[y:y + s, x:x + s] / 255.0, (96, 96), anti_aliasing=True)

    ihc, cell, mic = d.immunohistochemistry(), d.cell(), d.microaneurysms()
    imgs = {"ihc_a": crop(ihc, 0, 0), "ihc_b": crop(ihc, 300, 50), "ihc_c": crop(ihc, 100, 300),
            "cell_a": crop(cell, 50, 50), "cell_b": crop(cell, 400, 300),
            "micro": resize(rgb(mic) / 255.0, (96, 96)),
            "voro_1": _walk10_voronoi(1), "voro_2": _walk10_voronoi(2),
            "ihc_t": crop(ihc, 300, 300), "cell_t": crop(cell, 250, 150),
            "voro_t": _walk10_voronoi(3)}
    seeds = [0, 1, 2, 3, 4, 5, 6, 7, 50, 51, 52]
    return {n: (torch.from_numpy((np.clip(a, 0, 1) * 255).round() / 255).permute(2, 0, 1)
                .contiguous(), torch.from_numpy(np.ascontiguousarray(a)).permute(2, 0, 1), s)
            for (n, a), s in zip(imgs.items(), seeds, strict=True)}


def walk10_cases(steps: int, seed: int, gains=None) -> list[dict]:
    """Walk 10's images darkened its way (:func:`walk10_darken`, its seeds), with round 7's
    outputs and the tool's network: :func:`lowlight_cases` records."""
    ph = walk10_photos()
    clean = {n: J for n, (J, _, _) in ph.items()}
    dark = {(n, 0): walk10_darken(v, WALK10_DARK, s) for n, (_, v, s) in ph.items()}
    return lowlight_cases(clean, steps, seed + 8000, outputs=round7_lowlight_outputs,
                          dark=dark, gains=gains)


def key_range_dev_cases(side: int, steps: int, seed: int, gains) -> dict[str, list[dict]]:
    """Every in-repo low-light development set (h68ll15): :func:`lowlight_dev_cases`, rounds
    13 and 14 (256 px, as measured) and walk 10's (:func:`walk10_cases`), each record with
    the candidates' ``gains``."""
    return lowlight_dev_cases(side, steps, seed, gains) | {
        "round 13": lowlight_cases(round13_lowlight_photos(256), steps, seed + 6000,
                                   dark_params=ROUND13_DARK, outputs=round7_lowlight_outputs,
                                   darken=round9_darken, gains=gains),
        "round 14": lowlight_cases(round14_lowlight_photos(256), steps, seed + 7000,
                                   dark_params=ROUND14_DARK, outputs=round7_lowlight_outputs,
                                   darken=round9_darken, gains=gains),
        "walk 10": walk10_cases(steps, seed, gains)}


def _gain_confusion(recs: list[dict], name: str, margin: float) -> np.ndarray:
    """:func:`_ll_confusion` with candidate ``name``'s gain in place of main's score: ours
    returned where the gain reaches ``margin`` (NaN does not) and the input is judged."""
    t = np.zeros((2, 2), int)
    for r in recs:
        o, i, _ = r["ref"]
        t[int(bool(r["gains"][name] >= margin) and not r.get("why")), int(o >= i)] += 1
    return t


def key_range_table(sets: dict[str, list[dict]], names) -> str:
    """Print, per candidate, the pooled and per-set counts at the default margin (warned &
    worse / warned & better / quiet & worse / quiet & better), agreement and outputs
    returned worse; return the candidate the rule picks: the fewest returned worse pooled,
    then the highest pooled agreement, ties to main (listed first)."""
    from iclr25._guard import MARGINS

    m = MARGINS["exposure"]
    best, key = None, None
    for name in names:
        pooled, cells = np.zeros((2, 2), int), []
        for s, recs in sets.items():
            t = _gain_confusion(recs, name, m)
            pooled += t
            cells.append(f"{s} {t[0, 0]}/{t[0, 1]}/{t[1, 0]}/{t[1, 1]} "
                         f"{np.trace(t) / t.sum():.1%} ({t[1, 0]})")
        a = float(np.trace(pooled) / pooled.sum())
        print(f"{name}: pooled {pooled[0, 0]}/{pooled[0, 1]}/{pooled[1, 0]}/{pooled[1, 1]} "
              f"of {pooled.sum()}, agreement {a:.1%}, returned worse {pooled[1, 0]}; "
              + "; ".join(cells), flush=True)
        k = (int(pooled[1, 0]), -round(a, 12))
        if key is None or k < key:
            best, key = name, k
    print(f"key range: the rule picks {best!r}")
    return best


def _returned_worse(label: str, recs: list[dict], name: str, margin: float) -> None:
    """Print each output candidate ``name`` returns that is worse than its input."""
    for r in recs:
        if _gain_confusion([r], name, margin)[1, 0]:
            print(f"  {label}, {name}, returned worse: {r['case']} / {r['out']}: reference "
                  f"{r['ref'][0]:.2f} vs {r['ref'][1]:.2f} dB, gain {r['gains'][name]:.2f}")


def run_key_range(side: int, steps: int, seed: int) -> None:
    """The candidates of :func:`key_range_candidates` on :func:`key_range_dev_cases` by the
    rule in the module's docstring (h68ll15): :func:`key_range_table`, and the outputs each
    returns worse."""
    from iclr25._guard import MARGINS

    cands = key_range_candidates()
    sets = key_range_dev_cases(side, steps, seed, cands)
    key_range_table(sets, cands)
    for name in cands:
        for s, recs in sets.items():
            _returned_worse(s, recs, name, MARGINS["exposure"])


#: The candidate ``--set lowlight-key-range``'s rule picks (a name of
#: :func:`key_range_candidates`): (c), 7 returned worse of 3,018 pooled, agreement 53.6%
#: (main 23, 70.5%). Round 15 is judged with it and with main's.
KEY_RANGE_PICK: str | None = "(c) bounded brightening"

#: Darkenings of round 15 (none used before): walk 10's kind (:func:`walk10_darken`) with a
#: cooler cast, a steeper curve and fewer photons (k 0.15, cast 0.7 / 0.9 / 1, γ 1.2, 300
#: e-, read σ 0.004) and with a warm cast at a deeper exposure (k 0.08, cast 1 / 0.85 / 0.6,
#: γ 1, 600 e-, read σ 0.002); round 9's kind (:func:`round9_darken`): a camera 5.1 stops
#: under (× 1/35, 1000 photons, read σ 0.0025) and a display curve (k 0.2, γ 1.7, 300
#: photons, read σ 0.009). All written to 8 bits.
ROUND15_DARK = ({"kind": "walk10", "k": 0.15, "cast": (0.7, 0.9, 1.0), "gamma": 1.2,
                 "lam": 300.0, "read_sigma": 0.004},
                {"kind": "walk10", "k": 0.08, "cast": (1.0, 0.85, 0.6), "gamma": 1.0,
                 "lam": 600.0, "read_sigma": 0.002},
                {"kind": "round9", "space": "camera", "k": 1 / 35, "lam": 1000.0,
                 "read_sigma": 0.0025},
                {"kind": "round9", "space": "display", "k": 0.2, "gamma": 1.7, "lam": 300.0,
                 "read_sigma": 0.009})

#: Round 15's photos by kind (:func:`round15_lowlight_photos`); dark-toned: typical scenes
#: whose reference mean luma lies in 0.15-0.30.
ROUND15_KINDS = {"typical": ("china temple window", "flower bloom window",
                             "hopper right window", "lfw 96-99, 196-199", "market", "beach"),
                 "dark-toned": ("flower top window", "hopper left window", "fluorescence",
                                "library", "dusk garden", "slate roof", "mossy stones"),
                 "dark": ("candle", "city lights")}


def round15_darken(J: torch.Tensor, p: dict, seed: int) -> torch.Tensor:
    """One of :data:`ROUND15_DARK`: :func:`walk10_darken` or :func:`round9_darken` by its
    ``"kind"``."""
    return (walk10_darken if p["kind"] == "walk10" else round9_darken)(J, p, seed)


def _r15_dark_toned(name: str, rng, yy, xx, tex, h: int, w: int) -> np.ndarray:
    """Round 15's generated dark-toned typical scenes (:func:`round15_lowlight_generated`)."""
    if name == "fluorescence":                       # dim field, green cells, blue nuclei
        img = (0.13 + 0.02 * tex)[..., None] * np.array([0.8, 1.0, 0.9])
        for _ in range(45):
            cy, cx = rng.uniform(0, h), rng.uniform(0, w)
            ry, rx = rng.uniform(0.03, 0.06) * h, rng.uniform(0.03, 0.06) * w
            r2 = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2
            img[r2 < 1] = rng.uniform(0.3, 0.5) * np.array([0.45, 1.0, 0.4])
            img[r2 < 0.2] = np.array([0.2, 0.3, 0.6])
    elif name == "library":                          # dark wood, books, a lamp's glow
        img = (0.2 + 0.03 * tex)[..., None] * np.array([1.0, 0.7, 0.45])
        for r in range(4):
            y0 = int((0.08 + 0.23 * r) * h)
            x = 0
            while x < w:
                bw = int(rng.integers(w // 60, w // 25))
                img[y0:y0 + int(0.18 * h), x:x + bw] = rng.uniform(0.08, 0.45, 3)
                x += bw + 1
        lamp = (yy - 0.1 * h) ** 2 + (xx - 0.85 * w) ** 2
        img += (0.5 * np.exp(-lamp / (2 * (0.05 * w) ** 2)))[..., None] * np.array([1, 0.9,
                                                                                   0.6])
    elif name == "dusk garden":                      # a dusk sky over dark lawn and hedges
        sky = yy < 0.28 * h
        img = np.where(sky[..., None], (0.45 - 0.2 * yy / h)[..., None]
                       * np.array([0.9, 0.75, 0.95]),
                       (0.16 + 0.05 * tex)[..., None] * np.array([0.6, 0.9, 0.55]))
        img[(np.abs(xx - 0.5 * w - 0.3 * (yy - h)) < 0.05 * w) & (yy > 0.4 * h)] = \
            np.array([0.32, 0.28, 0.24])             # a gravel path
    elif name == "slate roof":                       # grey-blue slates, a strip of sky
        img = (0.22 + 0.04 * tex)[..., None] * np.array([0.85, 0.92, 1.05])
        img *= (0.85 + 0.3 * rng.random((h // 12 + 1, w // 16 + 1)).repeat(12, 0)
                .repeat(16, 1)[:h, :w])[..., None]
        img[(yy % 12 < 1) | ((xx + 8 * ((yy // 12) % 2)) % 16 < 1)] = 0.08
        img[yy < 0.1 * h] = np.array([0.55, 0.62, 0.75])
    else:                                            # mossy stones by a stream
        img = (0.17 + 0.04 * tex)[..., None] * np.array([0.7, 0.85, 0.6])
        for _ in range(14):
            cy, cx = rng.uniform(0.1, 0.9) * h, rng.uniform(0, w)
            r2 = ((yy - cy) / (0.08 * h)) ** 2 + ((xx - cx) / (0.07 * w)) ** 2
            img[r2 < 1] = rng.uniform(0.2, 0.4) * np.array([0.7, 0.9, 0.45])
        img[np.abs(yy - 0.6 * h - 0.1 * h * np.sin(xx / w * 6)) < 0.04 * h] = \
            np.array([0.35, 0.4, 0.45])              # the stream
    return img


def round15_lowlight_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 15's generated scenes, (h, w, 3) uint8, seeded (none like an earlier one):
    dark-toned typical (:func:`_r15_dark_toned`: ``"fluorescence"`` (green cells on a dim,
    not black, field), ``"library"``, ``"dusk garden"``, ``"slate roof"``, ``"mossy
    stones"``), typical ``"market"`` (striped awnings of random colour over stalls and a
    pale street) and ``"beach"`` (sky, sea, sand, a few towels), dark by design
    ``"candle"`` (a flame and its glow on black) and ``"city lights"`` (lit windows and
    street lamps as points on a black skyline)."""
    from scipy.ndimage import gaussian_filter

    names = ("fluorescence", "library", "dusk garden", "slate roof", "mossy stones",
             "market", "beach", "candle", "city lights")
    rng = np.random.default_rng(151 + names.index(name))
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    tex = gaussian_filter(rng.standard_normal((h, w)), 2)
    if name in names[:5]:
        img = _r15_dark_toned(name, rng, yy, xx, tex, h, w)
    elif name == "market":
        img = (0.62 + 0.05 * tex)[..., None] * np.array([0.95, 0.92, 0.85])
        for c in range(6):
            x0, col = c * w // 6, rng.uniform(0.2, 0.95, 3)
            stripe = ((xx - x0) // (w // 36)) % 2 == 0
            aw = (yy > 0.15 * h) & (yy < 0.35 * h) & (xx >= x0) & (xx < x0 + w // 6 - 4)
            img[aw & stripe] = col
            img[aw & ~stripe] = 0.9
            img[(yy >= 0.35 * h) & (yy < 0.6 * h) & (xx >= x0 + 4) & (xx < x0 + w // 6 - 8)] = \
                rng.uniform(0.25, 0.7, 3)
    elif name == "beach":
        img = np.where((yy < 0.35 * h)[..., None], np.array([0.62, 0.78, 0.95]),
                       np.where((yy < 0.55 * h)[..., None],
                                (0.4 + 0.05 * tex)[..., None] * np.array([0.45, 0.75, 0.9]),
                                (0.72 + 0.05 * tex)[..., None] * np.array([1.0, 0.9, 0.7])))
        for _ in range(4):
            y0, x0 = rng.integers(int(0.65 * h), int(0.9 * h)), rng.integers(0, w - w // 8)
            img[y0:y0 + h // 20, x0:x0 + w // 8] = rng.uniform(0.2, 0.95, 3)
    elif name == "candle":
        img = (0.008 + 0.003 * tex)[..., None] * np.ones(3)
        glow = (yy - 0.45 * h) ** 2 + (xx - 0.5 * w) ** 2
        img += (0.35 * np.exp(-glow / (2 * (0.06 * w) ** 2)))[..., None] * np.array([1, 0.7,
                                                                                    0.35])
        flame = ((yy - 0.42 * h) / (0.05 * h)) ** 2 + ((xx - 0.5 * w) / (0.012 * w)) ** 2 < 1
        img[flame] = np.array([1.0, 0.95, 0.75])
        img[(yy > 0.47 * h) & (yy < 0.8 * h) & (np.abs(xx - 0.5 * w) < 0.03 * w)] *= 4
    else:                                            # city lights
        img = (0.006 + 0.002 * tex)[..., None] * np.array([0.8, 0.85, 1.2])
        sky = yy < (0.35 + 0.15 * (np.floor(xx / (w / 12)) % 3) / 2) * h
        img[~sky] = 0.003
        k = int((~sky).sum() * 0.02)
        ys, xs = np.nonzero(~sky)
        pick = rng.choice(len(ys), k, replace=False)
        img[ys[pick], xs[pick]] = rng.uniform(0.5, 1.0, (k, 1)) * np.array([1.0, 0.85, 0.55])
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def _lfw_strip() -> np.ndarray:
    """A 2 × 4 montage of ``lfw_subset``'s faces 96-99 over its patches 196-199, grey."""
    import skimage.data

    lfw = skimage.data.lfw_subset()
    return _grey(np.block([[lfw[96 + c] for c in range(4)], [lfw[196 + c] for c in range(4)]]))


def round15_lowlight_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 15's held-out photos (issue 68, h68ll15; declared and committed after the
    candidates and rule of ``--set lowlight-key-range`` and before its table ran), (3,
    side·3/4, side) in [0, 1]; run at a user's size (``--side 256``). 15 images and crops
    used by no earlier set, testbed, test, walk (walk 10: 192-px crops of
    ``immunohistochemistry`` and ``cell``, ``microaneurysms``, Voronoi mosaics; walk 9:
    ``lfw_subset``'s faces 0-15) or NIQE's pristine model:

    * typical (6; reference mean luma 0.42-0.61): zoomed windows at places no set used of
      ``china`` (rows 0.45-0.7, columns 0.3-0.65), ``flower`` (rows 0.45-0.7, columns
      0.3-0.65) and ``grace_hopper`` (rows 0.1-0.4, columns 0.6-0.95), a 2 × 4 montage of
      ``lfw_subset``'s last four faces (96-99) over its last four patches (196-199; grey)
      and two generated scenes (:func:`round15_lowlight_generated`: a market, a beach);
    * dark-toned typical (7; reference mean luma 0.15-0.30): windows of ``flower`` (rows
      0-0.3, columns 0.3-0.65: leaves in shade) and ``grace_hopper`` (rows 0.45-0.7,
      columns 0-0.35: the dark uniform's shoulder) and five generated scenes: green cells
      on a dim field (fluorescence-like), a library, a dusk garden, a slate roof, mossy
      stones;
    * dark by design (2, generated): a candle on black, city lights on a black skyline.

    Grey photos (three equal channels, for the tint check): the montage."""
    china, flower, hopper = _colour_samples()
    raw = {"china temple window": _part(china, (0.45, 0.7), (0.3, 0.65)),
           "flower bloom window": _part(flower, (0.45, 0.7), (0.3, 0.65)),
           "hopper right window": _part(hopper, (0.1, 0.4), (0.6, 0.95)),
           "flower top window": _part(flower, (0, 0.3), (0.3, 0.65)),
           "hopper left window": _part(hopper, (0.45, 0.7), (0, 0.35)),
           "lfw 96-99, 196-199": _lfw_strip()}
    raw |= {n: round15_lowlight_generated(n, 300, 400)
            for n in ("market", "beach", "fluorescence", "library", "dusk garden",
                      "slate roof", "mossy stones", "candle", "city lights")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round15_lowlight(side: int, steps: int, seed: int) -> None:
    """Round 15: low light on :func:`round15_lowlight_photos` darkened by
    :data:`ROUND15_DARK` (:func:`round15_darken`) with round 7's outputs and the network,
    scored once and judged with main's rule and with :data:`KEY_RANGE_PICK`'s gain: the
    counts, per kind, the outputs returned worse, each input's reason; the tint check on
    grey photos and ``fallback="classical"``'s switches (main's)."""
    from iclr25._guard import MARGINS

    if KEY_RANGE_PICK is None:
        raise SystemExit("round 15 is judged with the candidates' pick: run --set "
                         "lowlight-key-range and set KEY_RANGE_PICK first")
    cands = key_range_candidates()
    names = tuple(dict.fromkeys(("main", KEY_RANGE_PICK)))
    recs = lowlight_cases(round15_lowlight_photos(side), steps, seed + 9000,
                          dark_params=ROUND15_DARK, outputs=round7_lowlight_outputs,
                          darken=round15_darken, gains={n: cands[n] for n in names})
    m = MARGINS["exposure"]
    for name in names:
        t = _gain_confusion(recs, name, m)
        print(f"low light, round 15, {name}: {t[0, 0]}/{t[0, 1]}/{t[1, 0]}/{t[1, 1]} of "
              f"{t.sum()}, agreement {np.trace(t) / t.sum():.1%}, returned worse {t[1, 0]}")
        for k, ks in ROUND15_KINDS.items():
            sub = [r for r in recs if r["case"].rsplit(" low light", 1)[0] in ks]
            t = _gain_confusion(sub, name, m)
            print(f"  {k}: {t[0, 0]}/{t[0, 1]}/{t[1, 0]}/{t[1, 1]}, agreement "
                  f"{np.trace(t) / t.sum():.1%}, returned worse {t[1, 0]}")
        _returned_worse("round 15", recs, name, m)
    for name in dict.fromkeys(r["case"] for r in recs):
        r = next(r for r in recs if r["case"] == name)
        print(f"  {name}: {r['why'] or 'judged'}")
    colour_report("low light, round 15", recs)
    fallback_report("low light, round 15", recs)

# --- JPEG by the quantisation posterior (h68jpeg) -------------------------------------------

JPEG_DEV_QUALITIES = (10, 20, 40, 60, 80, 90)
JPEG_HELDOUT_QUALITIES = (8, 15, 30, 50, 70, 85)
#: The candidates: (name, colour cast in the MSE, posterior SDs, margin dB), simplest first.
JPEG_CANDIDATES = tuple((f"{m} s{s:g} m{g:g}", m == "LC", s, g) for m in ("L", "LC")
                        for s in (0.0, 1.0, 2.0) for g in (0.0, 0.25, 0.5, 1.0))
#: The dev sets' pick (``--set jpeg-dev``; None until it has run and been committed).
JPEG_PICK: str | None = "L s0 m0.25"


def _sized(a: np.ndarray, h: int, w: int) -> np.ndarray:
    """(h0, w0[, 3]) uint8 -> (h, w, 3) uint8: centre crop to h:w, Lanczos resize."""
    from PIL import Image

    if a.ndim == 2:
        a = np.repeat(a[..., None], 3, -1)
    a = a[..., :3]
    H, W = a.shape[:2]
    ch, cw = (H, H * w // h) if W * h >= H * w else (W * h // w, W)
    a = a[(H - ch) // 2:(H + ch) // 2, (W - cw) // 2:(W + cw) // 2]
    return np.asarray(Image.fromarray(np.ascontiguousarray(a)).resize((w, h), Image.LANCZOS))


def jpeg_dev_photos() -> dict[str, np.ndarray]:
    """The JPEG development images, (128, 168, 3) uint8 (cropped to 120×160 per case)."""
    import skimage.data
    from sklearn.datasets import load_sample_images

    raw = {n: getattr(skimage.data, n)() for n in ("astronaut", "camera", "coffee", "chelsea",
                                                   "rocket", "immunohistochemistry")}
    raw |= dict(zip(("china", "flower"), load_sample_images().images, strict=True))
    raw |= {n: round7_defocus_generated(n, 300, 400) for n in ("rendered text", "shapes")}
    return {n: _sized(a, 128, 168) for n, a in raw.items()}


def jpeg_heldout_generated(name: str, h: int, w: int) -> np.ndarray:
    """The held-out round's generated scenes, seeded anew: round 7's dead leaves and
    rendered text drawn with seeds 6801 and 6802 (other discs, other words)."""
    seed = {"dead leaves": 6801, "rendered text": 6802}[name]
    orig = np.random.default_rng
    np.random.default_rng = lambda _s=None: orig(seed)   # round 7's generator, another seed
    try:
        return round7_defocus_generated(name, h, w)
    finally:
        np.random.default_rng = orig


def jpeg_heldout_photos() -> dict[str, np.ndarray]:
    """The JPEG held-out images, (128, 168, 3) uint8; none in :func:`jpeg_dev_photos`."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image

    raw = {n: getattr(skimage.data, n)() for n in ("cat", "colorwheel", "coins", "clock",
                                                   "brick")}
    raw["hubble quarter"] = _part(skimage.data.hubble_deep_field(), (0, 0.5), (0.5, 1))
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        raw["grace_hopper"] = np.asarray(Image.open(f).convert("RGB"))
    raw |= {n: jpeg_heldout_generated(n, 300, 400) for n in ("dead leaves", "rendered text")}
    return {n: _sized(a, 128, 168) for n, a in raw.items()}


def _jpeg_bytes(a: np.ndarray, q: int) -> np.ndarray:
    """Pillow's JPEG round trip of (h, w, 3) uint8 at quality ``q`` (4:2:0, as the library)."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(a)).save(buf, format="JPEG", quality=int(q))
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"))


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.asarray(a, dtype=np.float64) / 255).permute(2, 0, 1)


def jpeg_inputs(photo: np.ndarray, qualities, crop: tuple[int, int], resize_q: int,
                resize: float) -> list[tuple[str, torch.Tensor, torch.Tensor, bool]]:
    """(label, clean, input, should be judged) for one (128, 168, 3) photo: per quality the
    JPEG of the 120×160 top-left crop (aligned) and of the whole photo cropped by ``crop``
    after decoding (off the grid); the controls: the crop never quantised, with noise
    2/255, and a JPEG at ``resize_q`` of a larger copy resized by ``resize`` after decoding."""
    from PIL import Image

    h, w = 120, 160
    dy, dx = crop
    clean = photo[:h, :w]
    out = []
    for q in qualities:
        out.append((f"q{q} aligned", _t(clean), _t(_jpeg_bytes(clean, q)), True))
        out.append((f"q{q} off-grid", _t(photo[dy:dy + h, dx:dx + w]),
                    _t(_jpeg_bytes(photo, q)[dy:dy + h, dx:dx + w]), True))
    out.append(("never quantised", _t(clean), _t(clean), False))
    rng = np.random.default_rng(680)
    noisy = np.clip(clean + rng.normal(0, 2, clean.shape), 0, 255).round().astype(np.uint8)
    out.append(("noise 2/255", _t(clean), _t(noisy), False))
    H, W = round(h / resize), round(w / resize)
    big = np.asarray(Image.fromarray(photo).resize((W, H), Image.LANCZOS))
    small = np.asarray(Image.fromarray(_jpeg_bytes(big, resize_q)).resize((w, h),
                                                                          Image.LANCZOS))
    ref = np.asarray(Image.fromarray(big).resize((w, h), Image.LANCZOS))
    out.append((f"q{resize_q} resized {resize:g}", _t(ref), _t(small), False))
    return out


def _gauss(y: torch.Tensor, s: float) -> torch.Tensor:
    from scipy.ndimage import gaussian_filter

    return torch.from_numpy(gaussian_filter(y.numpy(), (0, s, s), mode="reflect"))


def _tv(y: torch.Tensor, wt: float) -> torch.Tensor:
    from skimage.restoration import denoise_tv_chambolle

    return torch.from_numpy(denoise_tv_chambolle(y.permute(1, 2, 0).numpy(), weight=wt,
                                                 channel_axis=-1)).permute(2, 0, 1)


def _unsharp(y: torch.Tensor, amount: float) -> torch.Tensor:
    return (y + amount * (y - _gauss(y, 1.0))).clamp(0, 1)


def _median(y: torch.Tensor, k: int) -> torch.Tensor:
    from scipy.ndimage import median_filter

    return torch.from_numpy(median_filter(y.numpy(), size=(1, k, k), mode="reflect"))


def _rejpeg(y: torch.Tensor, q: int) -> torch.Tensor:
    a = (y.permute(1, 2, 0).numpy() * 255).round().clip(0, 255).astype(np.uint8)
    return _t(_jpeg_bytes(a, min(q, 95)))


def _dequantised(y: torch.Tensor) -> torch.Tensor:
    from iclr25._dequantise import dequantise

    return dequantise(y[None])[0]


def _jpeg_op(y: torch.Tensor, q: int, g: np.random.Generator, op: str,
             *args: object) -> torch.Tensor:
    """One output of the JPEG rounds' family (:func:`_jpeg_family`) of ``y`` (3, h, w) at
    quality ``q``; ``g`` draws the noise."""
    if op == "bilateral":
        from skimage.restoration import denoise_bilateral

        sc, ss = args
        return torch.from_numpy(denoise_bilateral(y.permute(1, 2, 0).numpy(), sigma_color=sc,
                                                  sigma_spatial=ss, channel_axis=-1)
                                ).permute(2, 0, 1)
    if op == "box":
        pad, size = args
        return torch.nn.functional.avg_pool2d(
            torch.nn.functional.pad(y[None], pad, mode="replicate"), size, 1)[0]
    (a,) = args or (None,)
    ops = {"dequantised": lambda: _dequantised(y), "gauss": lambda: _gauss(y, a),
           "tv": lambda: _tv(y, a), "unsharp": lambda: _unsharp(y, a),
           "gamma": lambda: y.clamp(0, 1) ** a, "shift": lambda: (y + a).clamp(0, 1),
           "tint": lambda: (y + torch.tensor(a, dtype=y.dtype)[:, None, None]).clamp(0, 1),
           "noise": lambda: (y + torch.from_numpy(g.normal(0, a, y.shape))).clamp(0, 1),
           "rejpeg": lambda: _rejpeg(y, q + a), "median": lambda: _median(y, a)}
    return ops[op]()


def _jpeg_family(y: torch.Tensor, q: int, seed: int,
                 outputs: tuple[tuple, ...]) -> dict[str, torch.Tensor]:
    """The outputs of one JPEG input ``y`` (3, h, w) at quality ``q``: each ``(name, op,
    *args)`` of ``outputs`` (:func:`_jpeg_op`), the noise drawn from ``seed``; float64 in
    [0, 1]."""
    g = np.random.default_rng(seed)
    return {name: _jpeg_op(y, q, g, op, *args).to(torch.float64).clamp(0, 1)
            for name, op, *args in outputs}


#: Each JPEG round's outputs, ``(name, op, *args)`` (:func:`_jpeg_op`): development, held-out
#: rounds A, B and C (the rules in the module's docstring), with their noise seeds.
JPEG_DEV_OUTPUTS = (
    ("dequantised", "dequantised"), ("gauss 0.5", "gauss", 0.5), ("gauss 1", "gauss", 1.0),
    ("gauss 2", "gauss", 2.0), ("tv 0.02", "tv", 0.02), ("tv 0.05", "tv", 0.05),
    ("tv 0.1", "tv", 0.1), ("unsharp 0.5", "unsharp", 0.5), ("unsharp 1.5", "unsharp", 1.5),
    ("gamma 0.9", "gamma", 0.9), ("brighter 0.03", "shift", 0.03),
    ("tint R+ B-", "tint", [0.02, 0.0, -0.02]), ("noise 3/255", "noise", 3 / 255),
    ("rejpeg same q", "rejpeg", 0), ("median 3", "median", 3))
JPEG_A_OUTPUTS = (
    ("dequantised", "dequantised"), ("gauss 0.7", "gauss", 0.7), ("gauss 1.4", "gauss", 1.4),
    ("tv 0.03", "tv", 0.03), ("tv 0.08", "tv", 0.08), ("bilateral", "bilateral", 0.05, 1.5),
    ("unsharp 1.0", "unsharp", 1.0), ("unsharp 0.3", "unsharp", 0.3),
    ("gamma 1.1", "gamma", 1.1), ("darker 0.03", "shift", -0.03),
    ("tint G+", "tint", [0.0, 0.02, 0.0]), ("noise 2/255", "noise", 2 / 255),
    ("rejpeg q+10", "rejpeg", 10), ("median 3", "median", 3),
    ("box 2", "box", (0, 1, 0, 1), 2))
JPEG_B_OUTPUTS = (
    ("dequantised", "dequantised"), ("gauss 0.6", "gauss", 0.6), ("gauss 1.2", "gauss", 1.2),
    ("tv 0.04", "tv", 0.04), ("tv 0.15", "tv", 0.15), ("bilateral", "bilateral", 0.08, 1.0),
    ("unsharp 0.7", "unsharp", 0.7), ("unsharp 2.0", "unsharp", 2.0),
    ("gamma 0.95", "gamma", 0.95), ("brighter 0.015", "shift", 0.015),
    ("tint B+", "tint", [0.0, 0.0, 0.02]), ("noise 1/255", "noise", 1 / 255),
    ("rejpeg q+5", "rejpeg", 5), ("median 5", "median", 5),
    ("box 3", "box", (1, 1, 1, 1), 3))
JPEG_C_OUTPUTS = (
    ("dequantised", "dequantised"), ("gauss 0.8", "gauss", 0.8), ("gauss 1.6", "gauss", 1.6),
    ("tv 0.025", "tv", 0.025), ("tv 0.12", "tv", 0.12),
    ("bilateral", "bilateral", 0.06, 1.2), ("unsharp 0.4", "unsharp", 0.4),
    ("unsharp 1.2", "unsharp", 1.2), ("gamma 1.05", "gamma", 1.05),
    ("darker 0.02", "shift", -0.02), ("tint R+", "tint", [0.015, 0.0, 0.0]),
    ("noise 1.5/255", "noise", 1.5 / 255), ("rejpeg q+15", "rejpeg", 15),
    ("median 4", "median", 4), ("box 4", "box", (1, 2, 1, 2), 4))


def jpeg_dev_outputs(y: torch.Tensor, q: int) -> dict[str, torch.Tensor]:
    """The development outputs of one JPEG input ``y`` (3, h, w) at quality ``q``."""
    return _jpeg_family(y, q, 681, JPEG_DEV_OUTPUTS)


def jpeg_heldout_outputs(y: torch.Tensor, q: int) -> dict[str, torch.Tensor]:
    """The held-out outputs of one JPEG input ``y`` (3, h, w) at quality ``q``."""
    return _jpeg_family(y, q, 682, JPEG_A_OUTPUTS)


def _ref_psnr(a: torch.Tensor, b: torch.Tensor) -> float:
    mse = float(((a - b) ** 2).mean())
    return math.inf if mse == 0 else -10 * math.log10(mse)


def jpeg_cases(photos: dict[str, np.ndarray], qualities, crop, resize_q, resize,
               outputs) -> list[dict]:
    """Every (photo, input, output) case: reference PSNRs of ours and the input, whether
    the input should be judged, and the measure's terms (judged, ours' MSE and SD, the
    input's MSE, ours' colour cast), from which every candidate's verdict follows."""
    from iclr25._dequantise import QuantPosterior
    from iclr25._guard import colour_cast

    recs = []
    for pn, a in photos.items():
        for label, J, y, should in jpeg_inputs(a, qualities, crop, resize_q, resize):
            post = QuantPosterior.of(y)
            q = int(label[1:].split()[0]) if label.startswith("q") else 90
            s_in = post.terms(y)[0] if post.read.judged else math.nan
            x_in = post.terms(y, y)[0] if post.read.judged else math.nan
            for on, o in outputs(y, q).items():
                mse, sd = post.terms(o) if post.read.judged else (math.nan, math.nan)
                mse_x, sd_x = post.terms(o, y) if post.read.judged else (math.nan, math.nan)
                recs.append({"case": f"{pn} {label}", "out": on, "control": not should,
                             "judged": post.read.judged, "quality": post.read.quality,
                             "ref": (_ref_psnr(o, J), _ref_psnr(y, J)), "mse": mse, "sd": sd,
                             "mse_in": s_in, "mse_x": mse_x, "sd_x": sd_x,
                             "mse_x_in": x_in,
                             "cast": float(colour_cast(o[None], y[None])[0])})
    return recs


def jpeg_returned(r: dict, cand: tuple) -> bool:
    """Whether candidate ``cand`` (a row of :data:`JPEG_CANDIDATES`) returns ours."""
    _, cast, sds, margin = cand
    if not r["judged"]:
        return False
    if cast == "rgb":   # LX (:data:`JPEG_LX_CANDIDATES`): the expected RGB error
        ours = -10 * math.log10(max(r["mse_x"] + sds * r["sd_x"], 1e-30))
        return ours >= -10 * math.log10(max(r["mse_x_in"], 1e-30)) + margin
    c2 = r["cast"] ** 2 if cast else 0.0
    ours = -10 * math.log10(max(r["mse"] + c2 + sds * r["sd"], 1e-30))
    inp = -10 * math.log10(max(r["mse_in"], 1e-30))
    return ours >= inp + margin


def jpeg_table(recs: list[dict], returned) -> tuple[np.ndarray, float, int, float]:
    """[[warned & worse, warned & better], [quiet & worse, quiet & better]], agreement,
    returned worse, and the share of judged cases' better outputs returned."""
    t = np.zeros((2, 2), int)
    better = ret_better = 0
    for r in recs:
        ret = returned(r)
        worse = r["ref"][0] < r["ref"][1]
        t[1 if ret else 0, 0 if worse else 1] += 1
        if r["judged"] and not worse:
            better += 1
            ret_better += ret
    return t, float(np.trace(t) / t.sum()), int(t[1, 0]), ret_better / max(better, 1)


def _jpeg_report(label: str, recs: list[dict], cands, returned=jpeg_returned) -> None:
    """Counts, agreement, returned worse and better returned of NIQE's default and of each
    of ``cands`` (``returned(r, c)``: whether ``c`` returns ours in case ``r``)."""
    ctrl = [r for r in recs if r["control"]]
    cases = {r["case"] for r in recs}
    judged = {r["case"] for r in recs if r["judged"]}
    print(f"{label}: {len(recs)} cases ({len(ctrl)} controls); inputs judged "
          f"{len(judged)} of {len(cases)}; controls judged "
          f"{len({r['case'] for r in ctrl if r['judged']})} of "
          f"{len({r['case'] for r in ctrl})}; qualities read (declared: read): "
          + ", ".join(sorted({f"{r['case'].split(' q')[-1].split()[0]}: {r['quality']}"
                              for r in recs if r["judged"]})))
    t, ag, rw, sh = jpeg_table(recs, lambda r: False)
    print(f"  main (NIQE, input kept): {_counts(t)}, agreement {ag:.1%}, returned worse {rw}")
    for c in cands:
        t, ag, rw, sh = jpeg_table(recs, lambda r, c=c: returned(r, c))
        print(f"  {c[0]}: {_counts(t)}, agreement {ag:.1%}, returned worse {rw}, better "
              f"returned {sh:.1%}")


def _by_quality(recs: list[dict], qualities: tuple[int, ...], cands: tuple,
                report=None) -> None:
    """``report`` (:func:`_jpeg_report`) of ``cands`` per quality, controls left out."""
    for q in qualities:
        (report or _jpeg_report)(f"  quality {q}", [r for r in recs if not r["control"]
                                                    and r["case"].split(" q")[-1]
                                                    .startswith(f"{q} ")], cands)


def _by_photo(recs: list[dict], photos: dict, cands: tuple, report=None) -> None:
    """``report`` (:func:`_jpeg_report`) of ``cands`` per photo, controls left out."""
    for pn in photos:
        (report or _jpeg_report)(f"  {pn}", [r for r in recs if not r["control"]
                                             and r["case"].startswith(f"{pn} q")], cands)


def _worse_lines(recs: list[dict], cand: tuple, named: bool = True, digits: int = 3) -> None:
    """Each case ``cand`` returns that the reference scores below its input."""
    for r in recs:
        if jpeg_returned(r, cand) and r["ref"][0] < r["ref"][1]:
            who = f"{cand[0]} " if named else ""
            print(f"    {who}returned worse: {r['case']} {r['out']}: {r['ref'][0]:.{digits}f} < "
                  f"{r['ref'][1]:.{digits}f} dB")


def _condition(label: str, recs: list[dict], pick: tuple,
               returned=jpeg_returned) -> tuple[float, int, float, float]:
    """A held-out round's condition (rounds B and C, the module's docstring): ``pick``
    returns none worse (``returned(r, pick)``: whether it returns ours), agrees above NIQE's
    (the input kept) and judges no control. Returns its agreement, returned worse, share of
    better outputs returned and NIQE's agreement."""
    t, ag, rw, share = jpeg_table(recs, lambda r: returned(r, pick))
    main_ag = jpeg_table(recs, lambda r: False)[1]
    ctrl = len({r["case"] for r in recs if r["control"] and r["judged"]})
    ok = rw == 0 and ag > main_ag and ctrl == 0
    print(f"round {label}: condition {label} {'HOLDS' if ok else 'FAILS'} (returned worse {rw}; "
          f"agreement {ag:.1%} vs NIQE's (the input kept) {main_ag:.1%}; controls judged "
          f"{ctrl}); better outputs returned {share:.1%} (reported, not a condition)")
    return ag, rw, share, main_ag


def run_jpeg_dev() -> None:
    """The dev sets: every candidate's table, pooled, then per quality and alignment."""
    recs = jpeg_cases(jpeg_dev_photos(), JPEG_DEV_QUALITIES, (3, 5), 40, 0.8,
                      jpeg_dev_outputs)
    _jpeg_report("JPEG dev, pooled", recs, JPEG_CANDIDATES)
    best = min(JPEG_CANDIDATES, key=lambda c: (
        jpeg_table(recs, lambda r: jpeg_returned(r, c))[2],
        -jpeg_table(recs, lambda r: jpeg_returned(r, c))[1]))
    print(f"the rule's pick: {best[0]}")
    _by_quality(recs, JPEG_DEV_QUALITIES, (best,))
    _worse_lines(recs, best, named=False, digits=2)


def run_jpeg_heldout() -> None:
    """The held-out round, once, with :data:`JPEG_PICK` against main."""
    if JPEG_PICK is None:
        raise SystemExit("the held-out round is judged with the dev sets' pick: run --set "
                         "jpeg-dev and set JPEG_PICK first")
    pick = next(c for c in JPEG_CANDIDATES if c[0] == JPEG_PICK)
    recs = jpeg_cases(jpeg_heldout_photos(), JPEG_HELDOUT_QUALITIES, (5, 2), 60, 0.75,
                      jpeg_heldout_outputs)
    _jpeg_report("JPEG held-out", recs, (pick,))
    _by_quality(recs, JPEG_HELDOUT_QUALITIES, (pick,))
    _worse_lines(recs, pick, named=False, digits=2)



# --- JPEG, held-out round B (h68jpeg2; the lead's second decision, declared after round A) --

JPEG_HELDOUT_B_QUALITIES = (12, 25, 45, 65, 75, 95)
#: Round B's generated scenes: (the earlier round's generator, its kind, the new seed, the
#: size it is drawn at: the final one where 1-px detail would alias under resizing).
JPEG_B_GENERATED = {"shapes": ("round7", 6901, (300, 400)),
                    "terrain": ("round7", 6902, (300, 400)),
                    "clouds": ("round11", 6903, (300, 400)),
                    "tiles": ("round11", 6904, (128, 168)),
                    "plaid": ("round12", 6905, (128, 168)),
                    "bookshelf": ("round12", 6906, (128, 168))}


def jpeg_heldout_b_generated(name: str) -> np.ndarray:
    """Round B's generated scene ``name`` (:data:`JPEG_B_GENERATED`): an earlier round's
    generator of that kind drawn with a seed no set used (other shapes, relief, clouds,
    cells, stripes, books)."""
    gen, seed, (h, w) = JPEG_B_GENERATED[name]
    fn = {"round7": round7_defocus_generated, "round11": round11_generated,
          "round12": round12_motion_generated}[gen]
    orig = np.random.default_rng
    np.random.default_rng = lambda _s=None: orig(seed)   # the generator, another seed
    try:
        return fn(name, h, w)
    finally:
        np.random.default_rng = orig


def _figure_pixels(draw, h: int, w: int, face: str) -> np.ndarray:
    """(h, w, 3) uint8 of a matplotlib figure of that size whose axes ``draw`` fills."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w / 100, h / 100), dpi=100, facecolor=face)
    draw(fig)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:h, :w, :3].copy()


def jpeg_heldout_b_photos() -> dict[str, np.ndarray]:
    """Round B's images, (128, 168, 3) uint8: none in any earlier set of this benchmark
    (dev, round A, rounds 3-15, motion's): scikit-image's ``grass`` (grey), two renderings
    of matplotlib's sample data (``axes_grid/bivariate_normal.npy`` as a bicubic heat map in
    ``plasma``; ``eeg.dat``'s four channels as traces on a light grey chart with a grid and
    labels) and six generated scenes seeded anew (:func:`jpeg_heldout_b_generated`)."""
    import matplotlib.cbook as cbook
    import skimage.data

    raw = {"grass": skimage.data.grass()}
    heat = np.asarray(cbook.get_sample_data("axes_grid/bivariate_normal.npy"), float)

    def heat_map(fig):
        ax = fig.add_axes((0, 0, 1, 1))
        ax.imshow(heat, cmap="plasma", interpolation="bicubic", aspect="auto")
        ax.set_axis_off()

    with cbook.get_sample_data("eeg.dat") as f:
        eeg = np.fromfile(f, dtype=float).reshape(800, 4)

    def traces(fig):
        ax = fig.add_axes((0.1, 0.12, 0.87, 0.82), facecolor="#e4e4e4")
        for i in range(4):
            ax.plot(np.arange(800) / 80, eeg[:, i] + 4 * i, lw=0.8)
        ax.grid(True, color="white", lw=0.8)
        ax.set_xlabel("time (s)", fontsize=7)
        ax.set_yticks([0, 4, 8, 12], ["PG3", "PG5", "PG7", "PG9"], fontsize=7)
        ax.tick_params(labelsize=7)

    raw["heat map"] = _figure_pixels(heat_map, 300, 400, "white")
    raw["eeg traces"] = _figure_pixels(traces, 300, 400, "#d9d9d9")
    raw |= {n: jpeg_heldout_b_generated(n) for n in JPEG_B_GENERATED}
    return {n: _sized(a, 128, 168) for n, a in raw.items()}


def jpeg_heldout_b_outputs(y: torch.Tensor, q: int) -> dict[str, torch.Tensor]:
    """Round B's outputs of one JPEG input ``y`` (3, h, w) at quality ``q``: the family of
    the dev sets' and round A's at other strengths."""
    return _jpeg_family(y, q, 683, JPEG_B_OUTPUTS)


def run_jpeg_heldout_b() -> None:
    """Round B, once, with :data:`JPEG_PICK` against main; condition B (the module's
    docstring) printed."""
    pick = next(c for c in JPEG_CANDIDATES if c[0] == JPEG_PICK)
    photos = jpeg_heldout_b_photos()
    recs = jpeg_cases(photos, JPEG_HELDOUT_B_QUALITIES, (2, 7), 55, 0.7,
                      jpeg_heldout_b_outputs)
    _jpeg_report("JPEG held-out round B", recs, (pick,))
    _by_quality(recs, JPEG_HELDOUT_B_QUALITIES, (pick,))
    _by_photo(recs, photos, (pick,))
    _worse_lines(recs, pick, named=False, digits=2)
    _condition("B", recs, pick)

# --- JPEG, candidate LX and held-out round C (h68jpeg3; the rule is in the module docstring) ----

#: LX's candidates (name, "rgb", posterior SDs, margin dB): the expected RGB error.
JPEG_LX_CANDIDATES = tuple((f"LX s0 m{g:g}", "rgb", 0.0, g) for g in (0.0, 0.25, 0.5))
#: The dev sets' pick among :data:`JPEG_LX_CANDIDATES` (None until ``--set jpeg-lx-dev`` has
#: run and the pick is committed).
JPEG_LX_PICK: str | None = "LX s0 m0.25"
JPEG_HELDOUT_C_QUALITIES = (10, 20, 35, 55, 80, 90)
#: Round C's generated scenes: (the earlier round's generator, the new seed, the size drawn
#: at: the final one where 1-px detail would alias under resizing, as round B).
JPEG_C_GENERATED = {"dead leaves": ("round7", 7101, (300, 400)),
                    "shapes": ("round7", 7102, (300, 400)),
                    "terrain": ("round7", 7103, (300, 400)),
                    "circuit": ("round11", 7104, (128, 168)),
                    "clouds": ("round11", 7105, (300, 400)),
                    "tiles": ("round11", 7106, (128, 168)),
                    "plaid": ("round12", 7107, (128, 168)),
                    "foam": ("round12", 7108, (128, 168)),
                    "sign": ("round12", 7109, (128, 168))}


def jpeg_heldout_c_photos() -> dict[str, np.ndarray]:
    """Round C's images, (128, 168, 3) uint8: earlier rounds' generators drawn with seeds no
    set used (:data:`JPEG_C_GENERATED`)."""
    out = {}
    for name, (gen, seed, (h, w)) in JPEG_C_GENERATED.items():
        fn = {"round7": round7_defocus_generated, "round11": round11_generated,
              "round12": round12_motion_generated}[gen]
        orig = np.random.default_rng
        np.random.default_rng = lambda _s=None, _o=orig, _seed=seed: _o(_seed)
        try:
            out[name] = _sized(fn(name, h, w), 128, 168)
        finally:
            np.random.default_rng = orig
    return out


def jpeg_heldout_c_outputs(y: torch.Tensor, q: int) -> dict[str, torch.Tensor]:
    """Round C's outputs of one JPEG input ``y`` (3, h, w) at quality ``q``: the family of
    the earlier rounds' at new strengths."""
    return _jpeg_family(y, q, 684, JPEG_C_OUTPUTS)


def run_jpeg_lx_dev() -> None:
    """LX on the dev cases beside L (the pick and the same margins); the rule's pick among
    :data:`JPEG_LX_CANDIDATES`; then LX on round B's 8 cases (a diagnosis only)."""
    recs = jpeg_cases(jpeg_dev_photos(), JPEG_DEV_QUALITIES, (3, 5), 40, 0.8,
                      jpeg_dev_outputs)
    ls = tuple(c for c in JPEG_CANDIDATES if c[0] in ("L s0 m0", "L s0 m0.25", "L s0 m0.5"))
    _jpeg_report("JPEG dev, pooled", recs, ls + JPEG_LX_CANDIDATES)
    best = min(JPEG_LX_CANDIDATES, key=lambda c: (
        jpeg_table(recs, lambda r: jpeg_returned(r, c))[2],
        -jpeg_table(recs, lambda r: jpeg_returned(r, c))[1], c[3]))
    print(f"the rule's pick: {best[0]}")
    _by_quality(recs, JPEG_DEV_QUALITIES, (ls[1], best))
    for c in JPEG_LX_CANDIDATES:
        _worse_lines(recs, c)
    print("round B (no longer held out; a diagnosis): the cases L s0 m0.25 returned worse")
    recs_b = jpeg_cases(jpeg_heldout_b_photos(), JPEG_HELDOUT_B_QUALITIES, (2, 7), 55, 0.7,
                        jpeg_heldout_b_outputs)
    pick_l = next(c for c in JPEG_CANDIDATES if c[0] == JPEG_PICK)
    for r in recs_b:
        if jpeg_returned(r, pick_l) and r["ref"][0] < r["ref"][1]:
            gain = lambda m, m_in: 10 * math.log10(m_in / m)   # noqa: E731
            print(f"    {r['case']} {r['out']}: ref {r['ref'][0] - r['ref'][1]:+.3f} dB; L "
                  f"{gain(r['mse'], r['mse_in']):+.3f} dB, LX "
                  f"{gain(r['mse_x'], r['mse_x_in']):+.3f} dB; returned by "
                  + ", ".join(c[0] for c in JPEG_LX_CANDIDATES if jpeg_returned(r, c)))
    _jpeg_report("round B, pooled (diagnosis)", recs_b, (pick_l,) + JPEG_LX_CANDIDATES)


def run_jpeg_heldout_c() -> None:
    """Round C, once, with :data:`JPEG_LX_PICK` against NIQE's and L's pick; condition C
    (the module's docstring) printed."""
    if JPEG_LX_PICK is None:
        raise SystemExit("round C is judged with LX's dev pick: run --set jpeg-lx-dev and "
                         "set JPEG_LX_PICK first")
    pick = next(c for c in JPEG_LX_CANDIDATES if c[0] == JPEG_LX_PICK)
    pick_l = next(c for c in JPEG_CANDIDATES if c[0] == JPEG_PICK)
    photos = jpeg_heldout_c_photos()
    recs = jpeg_cases(photos, JPEG_HELDOUT_C_QUALITIES, (6, 1), 50, 0.85,
                      jpeg_heldout_c_outputs)
    _jpeg_report("JPEG held-out round C", recs, (pick, pick_l))
    _by_quality(recs, JPEG_HELDOUT_C_QUALITIES, (pick,))
    _by_photo(recs, photos, (pick,))
    _worse_lines(recs, pick)
    _worse_lines(recs, pick_l)
    _condition("C", recs, pick)

# --- motion blur: the posterior under a line kernel (issue 68, h68motion) -----------------------
#
# THE RULE (written and committed before any candidate ran on data; h68motion):
#
# * Measure: ``iclr25._guard.MEASURES["motion"]`` (``iclr25._motion_posterior``): the
#   posterior PSNR under the line kernel (length 3-21 px by 1, angle every 7.5°) likeliest
#   given the photo (DFT of the photo's periodic component), and as the second score the
#   re-blur PSNR by that kernel against the input. Ours is kept where its posterior PSNR
#   >= the input's + m1 AND (unless m2 is "off") its re-blur PSNR >= the input's + m2
#   (NaN keeps nothing, as ``guarded``).
# * Grid: m1 in :data:`MOTION_M1` (0, 0.25, 0.5, 1, 1.5, 2, 3 dB) × m2 in :data:`MOTION_M2`
#   (off, 0, 1, 2, 3, 5, 7, 10 dB). Main (NIQE, ``niqe_blind``: the input always kept) is
#   reported beside it.
# * Development sets (``--set motion-dev``, run with ``--quick --side 128``): the photos of
#   rounds 3, 5 and 11 (:func:`new_photos`, :func:`round5_photos`, :func:`round11_photos`,
#   22 images; no longer held out), each blurred by :data:`MOTION_DEV_KERNELS` (line
#   lengths 5, 9, 12, 17 px at 20°, 75°, 140°, 165°: inside and outside the library's 7-13;
#   and a shaken path, :func:`shaken_kernel` seed 1, length 11), written to 8 bits; the
#   outputs of :func:`motion_outputs` (Richardson-Lucy with the true kernel at 5, 15 and 40
#   iterations, with the wrong length ×0.6 and ×1.6 and the wrong angle +60°; Wiener with
#   the true kernel at balance 0.05 and 0.002; unsharp masking at amounts 0.5, 1 (the
#   classical restorer) and 2; the true-kernel RL (15) tone-shifted (0.85x + 0.1), tinted
#   warm (× (1.08, 1, 0.92)) and with noise (σ 0.02); the input blurred further (Gaussian
#   σ 0.7)); 15 outputs per case (the rule's text said 16 when committed, 0b69d4d: the list
#   it gave, which the code makes, has 15). DCPT's network is not run (the check sees only its
#   output; these span better and worse).
# * Selection: over the grid, pooled over the development cases: the fewest outputs
#   returned worse (quiet & worse by the reference PSNR), then the highest agreement
#   (warned & worse + quiet & better), ties to the simpler: m2 "off" before any m2, then
#   the smaller m1, then the smaller m2.
# * Held-out round (``--set round12-motion``, ``--quick --side 128``; run once, after the
#   choice is committed): :func:`round12_motion_photos` (two windows of
#   ``stereo_motorcycle``'s left view, used nowhere before, and four generated scenes of
#   kinds no earlier set has: a bookshelf, a plaid weave, foam of rings, a street sign
#   board) blurred by :data:`MOTION_HELDOUT_KERNELS` (lengths 6, 10, 14, 19 px at 40°, 110°,
#   5°, 60°; a shaken path, seed 2, length 13), the same outputs.
# * Merge condition (held-out, the pick at its margins): returned worse 0; agreement above
#   main's (NIQE keeps the input: agreement = the share of worse outputs) on the same
#   cases; and at least 20% of the better outputs returned. If it holds, "motion" becomes
#   ``choose_measure``'s pick for ``degradation="motion_blur"`` at the pick's margins;
#   else it stays a measure no default uses.
# * Also reported (not decision inputs): how well length and angle are read on the line
#   kernels (dev and held-out): |length error| and the angle error mod 180°.
# * Tests, their tolerances declared here before measuring: on a seeded generated 1/f²
#   colour field (128 × 96, 8 bits) blurred by a line of length 9 at 30° and one of length
#   12 at 100°, the length read within 1 px and the angle within 7.5° (mod 180°); the
#   posterior PSNR ranks the sharp image above the blurred input and Wiener with the true
#   kernel at balance 1e-3 (over-deconvolved) below it; if merged, the default returns no
#   output worse than its input on a small generated case (the sharp image, the input and
#   the over-deconvolved output as the "network").

#: The posterior margins (dB) and the re-blur margins (dB; None: no second score) swept.
MOTION_M1 = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
MOTION_M2 = (None, 0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0)
#: Development kernels: (length px, angle degrees) lines and ("shaken", seed, length).
MOTION_DEV_KERNELS = ((5.0, 20.0), (9.0, 75.0), (12.0, 140.0), (17.0, 165.0),
                      ("shaken", 1, 11.0))
#: Held-out kernels (none used in development).
MOTION_HELDOUT_KERNELS = ((6.0, 40.0), (10.0, 110.0), (14.0, 5.0), (19.0, 60.0),
                          ("shaken", 2, 13.0))
#: The rule's pick (m1, m2), set from ``--set motion-dev``'s output and committed before
#: ``--set round12-motion`` runs. The development sweep (``--quick --side 128``, 1,650
#: cases: 22 photos × 5 kernels × 15 outputs, 1,144 worse than their input by the
#: reference, 506 not; CPU 42 s, load 0.4-1.6), pooled, warned & worse / warned & better /
#: quiet & worse / quiet & better, agreement, returned worse:
#:
#: ============================  =======================  ==========  ==============
#: (m1, m2) dB                   counts                   agreement   returned worse
#: ============================  =======================  ==========  ==============
#: main (NIQE: input kept)       1144 / 506 / 0 / 0       69.3%       0
#: (0, off)                      1104 / 167 / 40 / 339    87.5%       40
#: (0.25, off)                   1136 / 303 / 8 / 203     81.2%       8
#: (0.5, off)                    1143 / 369 / 1 / 137     77.6%       1
#: (1, off)                      1144 / 440 / 0 / 66      73.3%       0
#: (0, 0)                        1126 / 245 / 18 / 261    84.1%       18
#: (0.5, 0)                      1144 / 389 / 0 / 117     76.4%       0
#: (0, 1)                        1139 / 298 / 5 / 208     81.6%       5
#: (0.5, 1)                      1144 / 396 / 0 / 110     76.0%       0
#: (0, 2)                        1142 / 363 / 2 / 143     77.9%       2
#: **(0.25, 2), the pick**       1144 / 378 / 0 / 128     **77.1%**   **0**
#: (0.5, 2)                      1144 / 408 / 0 / 98      75.3%       0
#: (0.25, 3)                     1144 / 418 / 0 / 88      74.7%       0
#: (0, 5)                        1144 / 480 / 0 / 26      70.9%       0
#: ============================  =======================  ==========  ==============
#:
#: Per set at the pick: round 3 74.7%, round 5 81.1%, round 11 75.7%, none returned worse.
#: The pick returns 128 of the 506 better outputs (25.3%). Kernels read (lines, 88 cases):
#: length within 1 px 81%, angle within 7.5° 89%; a 12-px line at 140° read 6 px on 5 of
#: 22 photos; the shaken path reads 3-4 px on 20 of 22 (the line family cannot fit it).
MOTION_PICK: tuple[float, float | None] | None = (0.25, 2.0)
#: Round 12 (``--set round12-motion``, run once after the pick was committed, 4e236bf;
#: load 1.6, CPU 12 s): the pick 282 / 147 / 1 / 20, agreement 67.1% of 450, 1 returned
#: worse (Wiener at balance 0.05 on the plaid, line 6 px at 40°: 20.43 vs 20.48 dB), 20
#: of 167 better outputs returned (12.0%); main (NIQE: the input kept) 283 / 167 / 0 / 0,
#: 62.9%. Per photo: motorcycle windows 84.0% and 77.3%, bookshelf 54.7%, plaid 74.7%,
#: foam 62.7%, sign 49.3%. Lines read: length within 1 px 58%, angle within 7.5° 96% (24).
#: **The merge condition failed** (1 returned worse; 12.0% < 20%): no default uses
#: ``"motion"``.


def shaken_kernel(seed: int, length: float, scale: float = 1.0,
                  turn: float = 0.0) -> np.ndarray:
    """A camera-shake kernel, (k, k) summing to 1: a curved, wobbling path (a random
    direction, a bend of up to a third of its length, two small sinusoidal wobbles, seeded)
    of about ``length`` px, scaled by ``scale`` and turned by ``turn`` degrees, splatted
    bilinearly from 400 samples with a speed that varies along it (dwell at the ends)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(-0.5, 0.5, 400)
    th = rng.uniform(0, np.pi) + math.radians(turn)
    d, n = np.array([math.cos(th), -math.sin(th)]), np.array([math.sin(th), math.cos(th)])
    bend = rng.uniform(-1, 1) / 3 * length * (4 * t * t - 1 / 3)
    wob = sum(rng.uniform(0.3, 1.0) * np.sin(2 * np.pi * rng.uniform(1, 3) * t
                                             + rng.uniform(0, 2 * np.pi)) for _ in range(2))
    tt = np.sign(t) * np.abs(2 * t) ** 0.8 / 2        # slower near the ends
    p = (length * scale) * tt[:, None] * d + scale * (bend + wob)[:, None] * n
    p -= p.mean(0)
    r = int(np.ceil(np.abs(p).max())) + 1
    k = np.zeros((2 * r + 1, 2 * r + 1))
    x, y = p[:, 0] + r, p[:, 1] + r
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    for dy, dx, w in ((0, 0, (1 - fy) * (1 - fx)), (0, 1, (1 - fy) * fx),
                      (1, 0, fy * (1 - fx)), (1, 1, fy * fx)):
        np.add.at(k, (y0 + dy, x0 + dx), w)
    return k / k.sum()


def motion_psf(spec: tuple, scale: float = 1.0, turn: float = 0.0) -> np.ndarray:
    """The kernel of a :data:`MOTION_DEV_KERNELS` entry, its length × ``scale`` and its
    angle + ``turn`` degrees: the library's line kernel, or :func:`shaken_kernel`."""
    from iclr25._motion_posterior import line_kernel

    if spec[0] == "shaken":
        return shaken_kernel(spec[1], spec[2], scale, turn)
    return line_kernel(max(1.0, spec[0] * scale), (spec[1] + turn) % 180)


def _motion_blurred(J: torch.Tensor, psf: np.ndarray) -> torch.Tensor:
    """``J`` (3, h, w) blurred by ``psf`` as the library does (mirrored edges), 8 bits."""
    from iclr25.datasets.images import _depthwise

    y = _depthwise(J[None], torch.from_numpy(psf)[None])[0].clamp(0, 1)
    return (y * 255).round() / 255


def _rl_iters(y: torch.Tensor, psf: np.ndarray, n: int) -> torch.Tensor:
    """``n`` Richardson-Lucy iterations per channel, reflect-padded (as the library's)."""
    from skimage import restoration

    a = y.permute(1, 2, 0).numpy()
    r = psf.shape[0] // 2
    p = np.pad(a, ((r, r), (r, r), (0, 0)), mode="reflect")
    out = np.stack([restoration.richardson_lucy(p[..., c], psf, num_iter=n)
                    for c in range(3)], -1)[r:-r, r:-r]
    return torch.from_numpy(np.ascontiguousarray(out)).permute(2, 0, 1).clamp(0, 1)


def motion_outputs(y: torch.Tensor, spec: tuple) -> dict[str, torch.Tensor]:
    """The 15 outputs judged on a motion-blurred ``y`` (the rule's list, above)."""
    from skimage.filters import unsharp_mask
    from skimage.restoration import wiener

    psf = motion_psf(spec)
    good = _rl_iters(y, psf, 15)
    a = y.permute(1, 2, 0).numpy()
    r = psf.shape[0] // 2
    ap = np.pad(a, ((r, r), (r, r), (0, 0)), mode="reflect")

    def wien(b):
        w = np.stack([wiener(ap[..., c], psf, balance=b) for c in range(3)], -1)[r:-r, r:-r]
        return torch.from_numpy(np.ascontiguousarray(w)).permute(2, 0, 1).clamp(0, 1)
    n = torch.randn(y.shape, generator=torch.Generator().manual_seed(12), dtype=y.dtype)
    return {"RL true 5": _rl_iters(y, psf, 5), "RL true 15": good,
            "RL true 40": _rl_iters(y, psf, 40),
            "RL length 0.6x": _rl_iters(y, motion_psf(spec, scale=0.6), 15),
            "RL length 1.6x": _rl_iters(y, motion_psf(spec, scale=1.6), 15),
            "RL angle +60": _rl_iters(y, motion_psf(spec, turn=60.0), 15),
            "Wiener 0.05": wien(0.05), "Wiener 0.002": wien(0.002),
            **{f"unsharp {am:g}": torch.from_numpy(unsharp_mask(
                a, radius=2, amount=am, channel_axis=2)).permute(2, 0, 1).clamp(0, 1)
               for am in (0.5, 1.0, 2.0)},
            "tone-shifted": (0.85 * good + 0.1).clamp(0, 1),
            "warm": (good * torch.tensor([1.08, 1.0, 0.92], dtype=good.dtype)[:, None, None]
                     ).clamp(0, 1),
            "noisy": (good + 0.02 * n).clamp(0, 1),
            "blurred further": reblur(y[None], torch.from_numpy(gaussian_psf(0.7)))[0]}


def motion_cases(clean: dict[str, torch.Tensor], kernels) -> list[dict]:
    """One record per (photo, kernel, output): the reference PSNRs of the output and the
    input, and both scores of each (the posterior PSNR and the re-blur PSNR by the
    likeliest line, ``MEASURES["motion"]``), with the kernel read (length, angle)."""
    recs = []
    spec = MEASURES["motion"]
    for name, J in clean.items():
        for ks in kernels:
            y = _motion_blurred(J, motion_psf(ks))
            inp = _Inputs(y[None], None, "motion_blur")
            post = inp.motion[0]
            s_in = float(spec.score(y[None], None, inp)[0])
            r_in = float(spec.also[1](y[None], None, inp)[0])
            ref_in = float(psnr(y, J))
            case = f"{name} motion {ks}"
            for oname, o in motion_outputs(y, ks).items():
                recs.append({"case": case, "out": oname, "kernel": ks,
                             "read": (post.length, post.angle),
                             "ref": (float(psnr(o, J)), ref_in),
                             "s": (float(spec.score(o[None], None, inp)[0]), s_in),
                             "rb": (float(spec.also[1](o[None], None, inp)[0]), r_in)})
    return recs


def _motion_kept(r: dict, m1: float, m2: float | None) -> bool:
    """Whether ours is returned for record ``r`` at (m1, m2) (NaN keeps nothing)."""
    (so, si), (bo, bi) = r["s"], r["rb"]
    return bool(so >= si + m1) and (m2 is None or bool(bo >= bi + m2))


def _motion_table(recs: list[dict], m1: float | None, m2: float | None) -> np.ndarray:
    """2×2 [[warned & worse, warned & better], [quiet & worse, quiet & better]]; m1 None:
    main (NIQE: the input always kept)."""
    t = np.zeros((2, 2), int)
    for r in recs:
        o, i = r["ref"]
        kept = m1 is not None and _motion_kept(r, m1, m2)
        t[int(kept), int(o >= i)] += 1
    return t


def _motion_line(label: str, t: np.ndarray) -> str:
    better = t[0, 1] + t[1, 1]
    return (f"{label}: {_counts(t)}, agreement {np.trace(t) / t.sum():.1%} of {t.sum()}, "
            f"returned worse {t[1, 0]}, better returned {t[1, 1]} of {better} "
            f"({t[1, 1] / max(better, 1):.1%})")


def motion_read_report(label: str, recs: list[dict]) -> None:
    """How well length and angle are read on the line kernels (one per case)."""
    seen = {}
    for r in recs:
        seen.setdefault(r["case"], r)
    dl, da = [], []
    for r in seen.values():
        ks, (L, a) = r["kernel"], r["read"]
        if ks[0] == "shaken":
            print(f"  read {r['case']}: length {L:g}, angle {a:g}")
            continue
        dl.append(abs(L - ks[0]))
        da.append(abs((a - ks[1] + 90) % 180 - 90))
        print(f"  read {r['case']}: length {L:g} (true {ks[0]:g}), angle {a:g} "
              f"(true {ks[1]:g})")
    dl, da = np.array(dl), np.array(da)
    print(f"{label}: line kernels read on {len(dl)} photos: |length error| median "
          f"{np.median(dl):g} px, within 1 px {np.mean(dl <= 1):.0%}, within 2 px "
          f"{np.mean(dl <= 2):.0%}; angle error median {np.median(da):g}°, within 7.5° "
          f"{np.mean(da <= 7.5):.0%}, within 15° {np.mean(da <= 15):.0%}")


def motion_dev_sets(side: int) -> dict[str, dict[str, torch.Tensor]]:
    """The development photos of the motion rule: rounds 3, 5 and 11's."""
    return {"round 3": new_photos(side), "round 5": round5_photos(side),
            "round 11": round11_photos(side)}


def run_motion_dev(side: int) -> None:
    """The motion rule's development sweep (the rule above): per set and pooled, every
    (m1, m2) of the grid and main's; the pick; the outputs the pick returns worse; the
    kernels read."""
    sets = {n: motion_cases(c, MOTION_DEV_KERNELS) for n, c in motion_dev_sets(side).items()}
    pooled = [r for recs in sets.values() for r in recs]
    print(_motion_line("main (NIQE: input kept), pooled", _motion_table(pooled, None, None)))
    best, key = None, None
    for m2 in MOTION_M2:
        for m1 in MOTION_M1:
            t = _motion_table(pooled, m1, m2)
            per = "; ".join(f"{n} {np.trace(s) / s.sum():.1%} ({s[1, 0]})" for n, s in
                            ((n, _motion_table(rs, m1, m2)) for n, rs in sets.items()))
            print(_motion_line(f"m1 {m1:g} m2 {m2 if m2 is not None else 'off'}", t)
                  + f"; {per}")
            k = (t[1, 0], -np.trace(t) / t.sum(), m2 is not None, m1, m2 or 0.0)
            if key is None or k < key:
                best, key = (m1, m2), k
    print(f"motion: the rule picks m1 {best[0]:g}, m2 "
          f"{best[1] if best[1] is not None else 'off'}")
    for r in pooled:
        if _motion_kept(r, *best) and r["ref"][0] < r["ref"][1]:
            print(f"  returned worse: {r['case']} / {r['out']}: reference {r['ref'][0]:.2f} "
                  f"vs {r['ref'][1]:.2f} dB; posterior {r['s'][0]:.2f} vs {r['s'][1]:.2f}; "
                  f"re-blur {r['rb'][0]:.2f} vs {r['rb'][1]:.2f}")
    motion_read_report("motion, development", pooled)


def round12_motion_generated(name: str, h: int, w: int) -> np.ndarray:
    """Round 12's generated scenes, (h, w, 3) uint8, seeded (kinds no earlier set has):
    ``"bookshelf"`` (three shelves of book spines 3-9 px wide in random colours, 1-px dark
    gaps, light titles), ``"plaid"`` (a woven tartan: coloured stripes of 2-8 px across both
    axes, mixed where they cross, a 1-px twill), ``"foam"`` (200 rings of radius 2-10 px,
    1-px rims, on pale blue) and ``"sign"`` (a dark green board with white strokes 1-3 px
    wide: random letter-like segments in rows)."""
    rng = np.random.default_rng({"bookshelf": 121, "plaid": 122, "foam": 123, "sign": 124}[name])
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    if name == "bookshelf":
        img = np.tile(np.array([0.35, 0.22, 0.12]), (h, w, 1))
        rows = np.linspace(0, h, 4).astype(int)
        for top, bot in zip(rows[:-1], rows[1:], strict=True):
            x = 0
            while x < w:
                bw = int(rng.integers(3, 10))
                bt = top + 2 + int(rng.integers(0, max(1, (bot - top) // 4)))
                img[bt:bot - 2, x:x + bw - 1] = rng.uniform(0.1, 0.9, 3)
                img[bt + (bot - bt) // 3:bt + (bot - bt) // 3 + 2, x + 1:x + bw - 2] = 0.9
                x += bw
            img[bot - 2:bot] = np.array([0.25, 0.15, 0.08])
    elif name == "plaid":
        def stripes(n):
            v, i = np.zeros((n, 3)), 0
            while i < n:
                sw = int(rng.integers(2, 9))
                v[i:i + sw] = rng.uniform(0.1, 0.9, 3)
                i += sw
            return v
        ry, cx = stripes(h), stripes(w)
        twill = ((yy + xx) % 2 < 1)[..., None]
        img = np.where(twill, ry[:, None, :], cx[None, :, :])
        img = 0.5 * img + 0.25 * (ry[:, None, :] + cx[None, :, :])
    elif name == "foam":
        img = np.tile(np.array([0.75, 0.85, 0.95]), (h, w, 1))
        for _ in range(200):
            cy, cxx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(2, 10)
            d = np.sqrt((yy - cy) ** 2 + (xx - cxx) ** 2)
            img[np.abs(d - r) < 0.6] = rng.uniform(0.2, 0.6, 3)
    else:
        img = np.tile(np.array([0.05, 0.3, 0.15]), (h, w, 1))
        for row in range(3):
            cy = (row + 0.6) * h / 3.4
            x = 4.0
            while x < w - 8:
                for _ in range(int(rng.integers(2, 4))):
                    a0, a1 = rng.uniform(0, 6, 2), rng.uniform(0, 6, 2)
                    p0 = np.array([cy - 6 + 2 * a0[0], x + a0[1]])
                    p1 = np.array([cy - 6 + 2 * a1[0], x + a1[1]])
                    t = np.clip(((yy - p0[0]) * (p1[0] - p0[0]) + (xx - p0[1]) * (p1[1] - p0[1]))
                                / max(np.sum((p1 - p0) ** 2), 1e-9), 0, 1)
                    d = np.hypot(yy - p0[0] - t * (p1[0] - p0[0]), xx - p0[1] - t * (p1[1] - p0[1]))
                    img[d < rng.uniform(0.5, 1.5)] = 0.95
                x += rng.uniform(8, 11)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def round12_motion_photos(side: int) -> dict[str, torch.Tensor]:
    """Round 12's held-out photos for motion blur (issue 68, h68motion; declared with the
    rule, before any candidate ran), (3, side·3/4, side) in [0, 1]: two windows of
    scikit-image's ``stereo_motorcycle`` left view (used by no earlier set, testbed, test or
    NIQE's pristine model: rows 0.15-0.5 × columns 0.05-0.45, rows 0.45-0.9 × columns
    0.5-0.95) and four generated scenes (:func:`round12_motion_generated`, at the final
    size so that no resizing aliases their 1-px detail)."""
    import skimage.data

    left = skimage.data.stereo_motorcycle()[0]
    raw = {"motorcycle top-left": _part(left, (0.15, 0.5), (0.05, 0.45)),
           "motorcycle bottom-right": _part(left, (0.45, 0.9), (0.5, 0.95))}
    raw |= {n: round12_motion_generated(n, side * 3 // 4, side)
            for n in ("bookshelf", "plaid", "foam", "sign")}
    return {n: _fit(np.ascontiguousarray(a), side) for n, a in raw.items()}


def run_round12_motion(side: int) -> None:
    """Round 12, motion blur (held out; run once after :data:`MOTION_PICK` is committed):
    the pick and main's (NIQE: the input kept) on :func:`round12_motion_photos` at
    :data:`MOTION_HELDOUT_KERNELS`; the merge condition (above) and the kernels read."""
    if MOTION_PICK is None:
        raise SystemExit("round 12 is judged with the rule's pick: run --set motion-dev "
                         "and set MOTION_PICK first")
    recs = motion_cases(round12_motion_photos(side), MOTION_HELDOUT_KERNELS)
    main_t = _motion_table(recs, None, None)
    t = _motion_table(recs, *MOTION_PICK)
    print(_motion_line("round 12, main (NIQE: input kept)", main_t))
    m1, m2 = MOTION_PICK
    print(_motion_line(f"round 12, the pick m1 {m1:g} m2 {m2 if m2 is not None else 'off'}",
                       t))
    for n in dict.fromkeys(r["case"].split(" motion ")[0] for r in recs):
        s = _motion_table([r for r in recs if r["case"].startswith(n + " motion")], m1, m2)
        print("  " + _motion_line(n, s))
    for r in recs:
        if _motion_kept(r, m1, m2) and r["ref"][0] < r["ref"][1]:
            print(f"  returned worse: {r['case']} / {r['out']}: reference {r['ref'][0]:.2f} "
                  f"vs {r['ref'][1]:.2f} dB")
    better = t[0, 1] + t[1, 1]
    ok = (t[1, 0] == 0 and np.trace(t) / t.sum() > np.trace(main_t) / main_t.sum()
          and t[1, 1] >= 0.2 * better)
    print(f"round 12: merge condition {'HOLDS' if ok else 'FAILS'} (returned worse "
          f"{t[1, 0]}; agreement {np.trace(t) / t.sum():.1%} vs main's "
          f"{np.trace(main_t) / main_t.sum():.1%}; better returned "
          f"{t[1, 1] / max(better, 1):.1%}, at least 20% needed)")
    motion_read_report("motion, round 12", recs)


# --- noise's margin from the estimate's own standard error (issue 68, h68r2r) -----------------
# The rule, the candidates and round 16 were written down and committed before the sweep ran.
#
# * Why: ``MARGINS["r2r"]`` is a fixed 1 dB, the bound on recorruption's bias in ours' favour
#   (the input is scored at 1.12σ, 0.97 dB below its PSNR; an output that ignores the noise
#   loses nothing). Walk 13 found DCPT's all-in-one network +0.8-0.9 dB above its input by
#   the reference on all 24 noise cases (σ 20 and 35/255, 160-320 px), every one kept as the
#   input. A fixed margin ignores how precise the estimate is, which grows with the pixels.
# * Candidates (:data:`R2R_SE_CANDIDATES`): ours is kept where its estimate beats the input's
#   by ``floor + z · SE``, SE the standard error (dB) of the estimated difference (ours minus
#   input) of that image from the same draw (``iclr25._guard.r2r_se``: the ratio estimator's
#   variance over 16 × 16 tiles, channels together; 16 px spans a denoiser's error
#   correlation: NL-means' 5-px patches in a 13-px search window, a 3-px Gaussian's
#   support; a 96 × 72 photo still has 30 tiles); ``z`` 1.645 (one-sided 95%: the check asks
#   only whether ours is better) or 2 (the conventional two standard errors), ``floor`` 0,
#   0.25 or 0.5 dB (an allowance for the bias, which SE does not see). No new calls of
#   ``f``: both arms' per-pixel terms come from the one draw the check makes.
# * Development sets (``--set r2r-se-sweep``): the noise cases in this tool, round 3
#   (:func:`new_photos`, :data:`NEW_NOISE`, :func:`new_noise_outputs`) and round 4
#   (:func:`round4_photos`, :data:`ROUND4_NOISE`, :func:`round4_noise_outputs`), each at 96
#   px (as measured, ``--quick``) and at 160 px (this tool's default side): 882 cases.
# * Rule: pooled over the development sets, the fewest outputs returned worse than the
#   input (quiet & worse: kept, below the input by the reference PSNR); among those the
#   highest pooled agreement; ties to main's fixed 1 dB; then the larger z, then the larger
#   floor.
# * Merge condition (round 16, ``--set round16-noise``, run once after the pick is
#   committed): :func:`round16_noise_photos`, 12 generated scenes (seeds 7901-7912, none
#   used before) at user sizes 160-320 px with odd sides, noise σ 10, 25 and 45/255 (8-bit,
#   as a user's file), :func:`round16_noise_outputs` (classical denoisers, near-ties and two
#   short-trained DCPT networks, all-in-one and noise-only, trained on scenes of seeds
#   7913-7918): the pick returns no output worse than its input and agrees with the
#   reference at least as often as main's 1 dB on the same cases; only then does it become
#   the default. Otherwise no default changes (the set, the rule and the tables stay).

#: The candidates (z, floor dB) of ``--set r2r-se-sweep``; ``None``: main's fixed margin.
R2R_SE_CANDIDATES: tuple[tuple[float, float] | None, ...] = (
    None, (1.645, 0.0), (1.645, 0.25), (1.645, 0.5), (2.0, 0.0), (2.0, 0.25), (2.0, 0.5))
#: Main's fixed margin (dB) for the recorrupted estimate (the default until h68r2rse2).
R2R_MAIN_MARGIN = 1.0
#: The rule's pick on the development sets (``--set r2r-se-sweep`` at 3f59c10, 882 cases,
#: 25 s; warned & worse / warned & better / quiet & worse / quiet & better, agreement,
#: returned worse): main's 1 dB 157 / 37 / 12 / 676, 94.4%, 12; z 1.645 at floor 0, 0.25,
#: 0.5: 94.1% (14), 93.8% (11), 93.7% (8); z 2 at floor 0, 0.25: 93.8% (13), 93.3% (9);
#: **z 2, floor 0.5: 163 / 57 / 6 / 656, 92.9%, 6** (rounds 3 and 4 at 96 px: 2 and 2; at
#: 160 px: 0 and 2). Of main's 12 and the pick's 6 returned worse, 8 and 5 are estimates
#: 1.6-3.3 dB above the reference's difference (china bottom-left at 20/255, hopper at
#: 15/255: the noise σ read high on fine texture), beyond any standard error of the draw.
R2R_SE_PICK: tuple[float, float] | None = (2.0, 0.5)
# Round 16 (run once at fb2a039 after the pick; a first start stopped inside the scoring,
# before any record was printed, on restore refusing the recorrupted input; 468 cases,
# 113 s; load 1.2): the pick 99 / 20 / 2 / 347, 95.3%, 2 returned worse (s7902 and s7908
# at 10/255, TV 0.08: reference 0.91 and 0.37 dB below the input, estimate +1.08 and +1.66
# dB, SE 0.25 and 0.44); main's 1 dB 97 / 53 / 4 / 314, 87.8%, 4. The networks beat their
# inputs by +2.0 dB (all-in-one) and +3.0 dB (noise) by the reference: 35 and 25 of 36
# returned at either margin. **The merge condition fails** (2 returned worse), so no
# default changed. Walk 13's 24 all-in-one outputs (/work/scratch/walk13, outside the rule,
# after round 16): estimated +0.74 to +0.87 dB (reference +0.75 to +0.91), SE 0.01-0.02 dB;
# the pick returns all 24, main's 1 dB none.


def noise_se_cases(clean: dict[str, torch.Tensor], seed: int, sigmas, outputs,
                   quantise: bool = False, estimators=None) -> list[dict]:
    """One record per (photo, σ, output, σ estimator) as :func:`new_noise_cases` (the same
    noisy inputs for the same ``seed``), scored from one recorrupted draw: ``ref`` (ours',
    the input's reference PSNR), ``d`` the estimate's difference (ours minus the input, dB;
    NaN where either is not estimable) and ``se`` its standard error
    (``iclr25._guard.r2r_se`` over :data:`R2R_SE_BLOCK` tiles), ``est`` the name of the σ
    estimator (``estimators``: name to a function of (B, C, H, W) giving (B,) σ; default
    Donoho's ``noise_sigma`` alone), ``sigma`` its reading and ``true`` the noise's σ.
    ``quantise``: the noisy input written to 8 bits first."""
    from iclr25._guard import noise_sigma

    estimators = estimators or {"donoho": noise_sigma}
    recs = []
    for i, (name, J) in enumerate(clean.items()):
        for j, sigma in enumerate(sigmas):
            g = torch.Generator().manual_seed(seed + 10 * i + j)
            y = (J + sigma * torch.randn(J.shape, generator=g, dtype=J.dtype)).clamp(0, 1)
            if quantise:
                y = torch.round(y * 255) / 255
            case = f"{name} noise {sigma * 255:g}/255 {J.shape[1]}x{J.shape[2]}"
            recs += se_records(case, y, J, outputs(), estimators, sigma)
    return recs


def se_records(case: str, y: torch.Tensor, J: torch.Tensor, outs: dict[str, object],
               estimators, true: float) -> list[dict]:
    """:func:`noise_se_cases`' records of one noisy input ``y`` (3, H, W) of clean ``J``:
    each output of ``outs`` (name -> restorer of a batch) read by each σ estimator."""
    from iclr25._guard import _mse_psnr, r2r_se, r2r_terms

    recs = []
    refs = {k: (float(psnr(f(y[None])[0], J)), float(psnr(y, J))) for k, f in outs.items()}
    for est, sigma_of in estimators.items():
        s = sigma_of(y[None]).cpu()
        t_in = r2r_terms(lambda b: b.clamp(0, 1), y[None], s)
        for oname, f in outs.items():
            t = r2r_terms(f, y[None], s)
            d = float(_mse_psnr(t.flatten(1).mean(1))[0] - _mse_psnr(t_in.flatten(1).mean(1))[0])
            recs.append({"case": case, "out": oname, "ref": refs[oname], "d": d,
                         "se": float(r2r_se(t, t_in, R2R_SE_BLOCK)[0]), "est": est,
                         "sigma": float(s[0]), "true": true})
    return recs


def r2r_kept(r: dict, cand: tuple[float, float] | None) -> bool:
    """Whether the default returns ours for record ``r`` under ``cand`` ((z, floor): the
    estimate beats the input's by ``floor + z · SE``; None: by main's fixed margin); NaN
    keeps the input, as ``guarded`` does."""
    m = R2R_MAIN_MARGIN if cand is None else cand[1] + cand[0] * r["se"]
    return bool(r["d"] >= m)


def r2r_confusion(recs: list[dict], cand: tuple[float, float] | None) -> np.ndarray:
    """Rows warned (input returned) / quiet (ours returned), columns worse / better than the
    input by the reference."""
    t = np.zeros((2, 2), int)
    for r in recs:
        t[int(r2r_kept(r, cand)), int(r["ref"][0] >= r["ref"][1])] += 1
    return t


def _cand_name(c: tuple[float, float] | None) -> str:
    return f"main {R2R_MAIN_MARGIN:g} dB" if c is None else f"z {c[0]:g}, floor {c[1]:g}"


def r2r_se_table(sets: dict[str, list[dict]],
                 cands=R2R_SE_CANDIDATES) -> tuple[float, float] | None:
    """:func:`rule_table` of the noise candidates: ties to main's, then the larger z, then
    the larger floor."""
    return rule_table("noise", sets, cands, r2r_confusion, _cand_name,
                      lambda c: (0.0, 0.0, 0.0) if c is None else (1.0, -c[0], -c[1]))

def r2r_dev_sets(seed: int) -> dict[str, list[dict]]:
    """The development sets of ``--set r2r-se-sweep``: rounds 3 and 4 at 96 and 160 px."""
    sets = {}
    for side in (96, 160):
        sets[f"round 3 {side}"] = noise_se_cases(new_photos(side), seed, NEW_NOISE,
                                                 new_noise_outputs)
        sets[f"round 4 {side}"] = noise_se_cases(round4_photos(side), seed + 1000,
                                                 ROUND4_NOISE, round4_noise_outputs)
    return sets


def run_r2r_se_sweep(seed: int) -> None:
    """The candidates on :func:`r2r_dev_sets` by the rule above (:func:`r2r_se_table`)."""
    r2r_se_table(r2r_dev_sets(seed))


#: Round 16's image sizes (h, w), 160-320 px with odd sides, one per scene.
ROUND16_SIZES = ((163, 245), (240, 320), (201, 161), (288, 216), (175, 311), (256, 256),
                 (320, 213), (229, 183), (160, 224), (197, 263), (247, 199), (215, 287))
#: Round 16's noise σ (none used by rounds 3 and 4: 15, 35, 50 and 20, 30, 45 there, 45
#: kept as the issue's strong case on new scenes).
ROUND16_NOISE = (10 / 255, 25 / 255, 45 / 255)


def round16_scene(seed: int, h: int, w: int) -> torch.Tensor:
    """A generated scene (3, h, w) in [0, 1], seeded: a gradient between two random colours,
    low-pass texture of random grain and strength, 5-9 ellipses, rectangles and grating
    patches of random colour with shading, and 2-5 thin lines."""
    from scipy.ndimage import gaussian_filter

    r = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    c0, c1 = r.uniform(0.05, 0.95, 3), r.uniform(0.05, 0.95, 3)
    t = yy * r.uniform(0.5, 1.5) + xx * r.uniform(-0.5, 0.5)
    img = c0[:, None, None] * (1 - t) + c1[:, None, None] * t
    tex = gaussian_filter(r.standard_normal((h, w)), r.uniform(0.7, 4))
    img = img + 0.15 * tex / (tex.std() + 1e-9) * r.uniform(0.2, 1.0)
    rows, cols = np.arange(h)[:, None], np.arange(w)[None]
    for _ in range(r.integers(5, 10)):
        col, cy, cx = r.uniform(0, 1, 3), r.uniform(0, h), r.uniform(0, w)
        a, b = r.uniform(8, h / 3), r.uniform(8, w / 3)
        kind = r.integers(0, 3)
        if kind == 0:
            m = ((rows - cy) / a) ** 2 + ((cols - cx) / b) ** 2 < 1
            img = np.where(m[None], col[:, None, None] * (1 + 0.3 * (yy - cy / h))[None], img)
        elif kind == 1:
            m = (abs(rows - cy) < a) & (abs(cols - cx) < b)
            img = np.where(m[None], col[:, None, None] * (1 - 0.3 * (xx - cx / w))[None], img)
        else:
            f, th = r.uniform(0.04, 0.3), r.uniform(0, math.pi)
            gr = 0.5 + 0.5 * np.sin(2 * math.pi * f * (rows * math.sin(th) + cols * math.cos(th)))
            m = (abs(rows - cy) < a / 1.5) & (abs(cols - cx) < b / 1.5)
            img = np.where(m[None], col[:, None, None] * gr[None], img)
    for _ in range(r.integers(2, 6)):
        x0 = r.integers(0, w)
        img[:, :, x0:x0 + r.integers(1, 3)] = r.uniform(0, 1, 3)[:, None, None]
    return torch.from_numpy(np.round(np.clip(img, 0, 1) * 255) / 255)


def round16_noise_photos() -> dict[str, torch.Tensor]:
    """Round 16's clean scenes: :func:`round16_scene` of seeds 7901-7912 at
    :data:`ROUND16_SIZES`."""
    return {f"s{7901 + i}": round16_scene(7901 + i, h, w)
            for i, (h, w) in enumerate(ROUND16_SIZES)}


def round16_networks() -> dict[str, object]:
    """Two short-trained DCPT networks, as a user's first run makes them: pre-trained 60
    steps (the CLI's default) on noise, blur and JPEG, then fine-tuned 80 steps (the CLI's
    default) all-in-one on the same kinds, or for noise alone; trained on
    :func:`round16_scene` of seeds 7913-7918 (sizes 176-208 px). Each as a restorer of a
    batch, run as ``restore`` runs it for the check (the forward, clamped to [0, 1])."""
    kinds = ("noise", "blur", "jpeg")
    return short_dcpt(kinds, {"DCPT all-in-one": kinds, "DCPT noise": ("noise",)})


def short_dcpt(kinds: tuple[str, ...], tunes: dict[str, tuple[str, ...]]) -> dict[str, object]:
    """DCPT networks as a user's first run makes them: pre-trained 60 steps (the CLI's
    default) on ``kinds``, then fine-tuned 80 steps (the CLI's default) on each of ``tunes``'
    kinds (name -> kinds); trained on :func:`round16_scene` of seeds 7913-7918 (sizes
    176-208 px). Each as a restorer of a batch, run as ``restore`` runs it for the check."""
    from iclr25.datasets.images import AllInOnePairs
    from iclr25.dcpt.networks import UNet
    from iclr25.dcpt.training import finetune, pretrain

    train = [round16_scene(7913 + i, 176 + 8 * i, 208 - 4 * i).float() for i in range(6)]
    pre = pretrain(UNet(width=16, seed=0), iter(AllInOnePairs(train, kinds, 64, 16, seed=0)),
                   n_classes=len(kinds), steps=60, lr=1e-3, seed=0).model
    nets = {k: finetune(pre, iter(AllInOnePairs(train, ks, 64, 16, seed=1)),
                        steps=80, seed=1).model for k, ks in tunes.items()}
    return {k: net_restorer(m) for k, m in nets.items()}


def net_restorer(m: torch.nn.Module):
    """``m`` as a restorer of a batch, as ``restore`` runs it for the check (the forward in
    float32, clamped to [0, 1])."""
    m.eval()

    def run(b: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():   # as restore runs it for the check: the recorrupted input
            return m(b.float()).clamp(0, 1).to(b)   # leaves [0, 1], which restore refuses
    return run


def noise_output_set(nets: dict[str, object], *, nlm_h: float, gaussians, tvs,
                     bilateral: tuple[float, float] | None, towards: tuple[float, ...],
                     blend: tuple[str, float, float], tone: tuple[float, float],
                     noisier: tuple[int, float]):
    """A factory of a held-out noise round's outputs: NL-means at h = 0.8σ̂ (the library's)
    and ``nlm_h`` σ̂, Gaussian filters of the ``gaussians`` px, TV of the ``tvs`` weights, a
    bilateral filter of (σ_colour, σ_space) ``bilateral`` (None: none), a 3×3 median; near
    ties: the input moved each share of ``towards`` NL-means, the input averaged with a Gaussian
    (``blend``: name, its share, its σ px), NL-means tone-shifted (``tone``: gain, offset),
    the input with more noise (``noisier``: seed, σ); and ``nets``."""
    from scipy.ndimage import gaussian_filter, median_filter
    from skimage.restoration import denoise_bilateral, denoise_tv_chambolle

    def make():
        nlm = _nlm(0.8)
        outs = {"NL-means": nlm, f"NL-means {nlm_h:g}h": _nlm(nlm_h)}
        outs |= {f"Gaussian {s:g}": _per_image(lambda a, s=s: gaussian_filter(a, (s, s, 0)))
                 for s in gaussians}
        outs |= {f"TV {w:g}": _per_image(lambda a, w=w: denoise_tv_chambolle(
            a, weight=w, channel_axis=-1)) for w in tvs}
        if bilateral is not None:
            outs["bilateral"] = _per_image(lambda a: denoise_bilateral(
                np.clip(a, 0, 1), sigma_color=bilateral[0], sigma_spatial=bilateral[1],
                channel_axis=-1))
        outs["median 3"] = _per_image(lambda a: median_filter(a, (3, 3, 1)))
        outs |= {f"{t:.0%} NL-means": lambda b, t=t: ((1 - t) * b + t * nlm(b)).clamp(0, 1)
                 for t in towards}
        name, share, width = blend
        gb = _per_image(lambda a: gaussian_filter(a, (width, width, 0)))
        outs[name] = lambda b: ((1 - share) * b + share * gb(b)).clamp(0, 1)
        outs["tone-shifted"] = lambda b: (tone[0] * nlm(b) + tone[1]).clamp(0, 1)
        outs["noisier"] = _more_noise(*noisier)
        return outs | nets
    return make


def round16_noise_outputs(nets: dict[str, object]):
    """Round 16's outputs (settings not used before; :func:`noise_output_set`): NL-means at
    h = 0.8σ̂ and 0.5σ̂, Gaussian filters of σ 0.8 and 2 px, TV (weight 0.08), a bilateral
    filter (σ_colour 0.08, σ_space 2), a 3×3 median; near-ties: the input moved 10% towards
    NL-means, the input averaged half and half with a 2.5-px Gaussian, NL-means
    tone-shifted (0.97 · x + 0.015), the input with more noise (σ 0.01, fixed draw); and
    ``nets`` (:func:`round16_networks`)."""
    return noise_output_set(nets, nlm_h=0.5, gaussians=(0.8, 2.0), tvs=(0.08,),
                            bilateral=(0.08, 2), towards=(0.1,),
                            blend=("half Gaussian 2.5", 0.5, 2.5), tone=(0.97, 0.015),
                            noisier=(29, 0.01))


def run_round16_noise(seed: int) -> None:
    """Round 16 (run once, after the pick is committed): the pick and main's 1 dB on
    :func:`round16_noise_photos` at :data:`ROUND16_NOISE` with :func:`round16_noise_outputs`;
    the merge condition above."""
    if R2R_SE_PICK is None:
        raise SystemExit("round 16 runs after the development sweep's pick is committed")
    recs = noise_se_cases(round16_noise_photos(), seed + 79010, ROUND16_NOISE,
                          round16_noise_outputs(round16_networks()), quantise=True)
    r2r_se_table({"round 16": recs}, (None, R2R_SE_PICK))
    for c in (None, R2R_SE_PICK):
        for net in ("DCPT all-in-one", "DCPT noise"):
            rs = [r for r in recs if r["out"] == net]
            t = r2r_confusion(rs, c)
            print(f"  {_cand_name(c)}, {net}: {_counts(t)}; mean gain by the reference "
                  f"{np.mean([r['ref'][0] - r['ref'][1] for r in rs]):+.2f} dB")
    t, m = r2r_confusion(recs, R2R_SE_PICK), r2r_confusion(recs, None)
    a, am = np.trace(t) / t.sum(), np.trace(m) / m.sum()
    for r in recs:
        if r2r_kept(r, R2R_SE_PICK) and r["ref"][0] < r["ref"][1]:
            print(f"  returned worse: {r['case']} / {r['out']}: reference {r['ref'][0]:.2f} vs "
                  f"{r['ref'][1]:.2f} dB, estimate {r['d']:+.2f} dB, SE {r['se']:.2f}")
    ok = t[1, 0] == 0 and a >= am
    print(f"round 16: merge condition {'holds' if ok else 'fails'} (returned worse "
          f"{t[1, 0]}, agreement {a:.1%} vs main's {am:.1%})")


# --- the recorrupted estimate's σ on textured photos (issue 68, h68sigma) ------------------------
# The candidates, the development sets, the rule and round 17's merge condition were written
# down and committed before any of them ran.
#
# * Why: h68r2r found main's default (Donoho's σ, ``noise_sigma``, and the fixed 1 dB) returns
#   12 worse outputs on rounds 3 and 4 (882 cases) and 4 on round 16 (468), most of them
#   estimates 1.6-3.3 dB too high on finely textured photos (china bottom-left at 20/255,
#   hopper at 15/255, TV at 10/255): the finest Haar band reads texture as noise, σ̂ is too
#   high, σ²(1 + 1/α²) is over-subtracted and a smooth output's MSE is under-estimated.
# * Candidates (σ estimators, :data:`SIGMA_ESTIMATORS`; used for the recorrupted estimate's σ
#   only), each with main's fixed 1 dB and with h68r2r's SE pick (z 2, floor 0.5 dB):
#   (1) ``pca``: Chen, Zhu & Heng (ICCV 2015): the eigenvalues of the covariance of all 8 × 8
#   patches (channels together, stride 1: the dev photos are as small as 96 × 72); the noise
#   eigenvalues are the longest tail of the smallest whose mean equals its median (as many
#   above the mean as below); σ̂ = √ of that mean (:func:`sigma_pca`).
#   (2) ``weak-texture``: Liu, Tanaka & Okutomi (2013): per channel, 7 × 7 patches whose
#   gradient energy lies below the Gamma quantile (confidence 1 − 1e-6) that pure noise of
#   the current σ̂ would reach; σ̂² the smallest eigenvalue of their covariance; 3
#   iterations from all patches; channels averaged (written here as ``sigma_weak_texture``
#   at 822e1f1; ``iclr25._guard.weak_texture_sigma`` since round 17 passed, the same code).
#   (3) ``flat-blocks``: Donoho on the flattest tenth of the 16 × 16 px blocks (at least
#   one), flatness read from the horizontal and vertical Haar bands, which are independent
#   of the diagonal one under white noise, so choosing blocks by them does not bias the
#   diagonal band's median (:func:`sigma_flat_blocks`).
# * Development sets (``--set sigma-sweep``): rounds 3 and 4 at 96 and 160 px (h68r2r's) and
#   round 16 (no longer held out): 1,350 cases per candidate; with a σ-accuracy table
#   (estimated over true σ per set and noise level, each estimator).
# * Rule: pooled over the development sets, the fewest outputs returned worse than the
#   input; then the highest pooled agreement; ties to main (Donoho, 1 dB), then to the
#   fixed 1 dB, then in the order listed.
# * Merge condition (round 17, ``--set round17-noise``, run once after the pick is
#   committed): :func:`round17_noise_photos`, 12 generated scenes (seeds 7941-7952, none
#   used before; half of them with fine texture, :func:`round17_scene`) at 160-320 px with
#   odd sides, σ 5, 15 and 30/255 written to 8 bits, :func:`round17_noise_outputs`
#   (over-smoothing TV and Gaussian, near-ties, round 16's two short-trained DCPT networks):
#   the pick returns fewer outputs worse than the input than main (or both none) AND agrees
#   with the reference at least as often as main. Only then does it become the default.


def sigma_pca(x: torch.Tensor, k: int = 8) -> torch.Tensor:
    """Chen, Zhu & Heng (ICCV 2015) noise σ per image of ``x`` (B, C, H, W): (B,) float64
    (0 below k × k pixels). The covariance of all k × k patches (channels together); of its
    eigenvalues, ascending, the longest run of the smallest whose mean has as many
    eigenvalues above it as below (mean equals median) is the noise's; σ̂ = √mean."""
    out = []
    for xi in x.detach().cpu().double():
        if min(xi.shape[-2:]) < k:
            out.append(0.0)
            continue
        p = torch.nn.functional.unfold(xi[None], k)[0]
        p = p - p.mean(1, keepdim=True)
        e = torch.linalg.eigvalsh(p @ p.T / p.shape[1])
        d = len(e)
        n = torch.arange(1, d + 1, dtype=torch.float64)
        tau = e.cumsum(0) / n                       # mean of the i smallest
        inside = torch.arange(d)[None] < n[:, None]
        above = ((e[None] > tau[:, None]) & inside).sum(1)
        below = ((e[None] < tau[:, None]) & inside).sum(1)
        i = int(torch.nonzero(above == below).max())  # i = 0 always qualifies
        out.append(float(tau[i].clamp(min=0).sqrt()))
    return torch.tensor(out, dtype=torch.float64)


def sigma_flat_blocks(x: torch.Tensor, block: int = 16, share: float = 0.1) -> torch.Tensor:
    """Donoho's σ (median |HH| / 0.6745, channels together) over the flattest ``share`` of the
    ``block`` × ``block`` px blocks of ``x`` (B, C, H, W), at least one; flatness the blocks'
    mean square of the horizontal and vertical Haar bands. (B,) float64 (Donoho over the
    whole image where no whole block fits)."""
    from iclr25._guard import _haar_hh, noise_sigma

    t = x.detach().cpu().double()
    b = block // 2
    H, W = t.shape[-2] // block * block, t.shape[-1] // block * block
    if H == 0 or W == 0:
        return noise_sigma(t)
    c = t[..., :H, :W]
    a, bb, cc, dd = c[..., 0::2, 0::2], c[..., 0::2, 1::2], c[..., 1::2, 0::2], c[..., 1::2, 1::2]
    lh, hl = (a + bb - cc - dd) / 2, (a - bb + cc - dd) / 2
    hh = _haar_hh(c)

    def blocks(v: torch.Tensor) -> torch.Tensor:    # (B, C, h, w) -> (B, blocks, C·b·b)
        B, C, h, w = v.shape
        return v.reshape(B, C, h // b, b, w // b, b).permute(0, 2, 4, 1, 3, 5).reshape(
            B, (h // b) * (w // b), -1)
    flat = (blocks(lh) ** 2 + blocks(hl) ** 2).mean(-1)
    n = max(1, math.ceil(share * flat.shape[1]))
    pick = flat.argsort(1)[:, :n]
    sel = torch.gather(blocks(hh).abs(), 1, pick[..., None].expand(-1, -1, b * b * t.shape[1]))
    return sel.flatten(1).median(1).values / 0.6745


def _donoho(x: torch.Tensor) -> torch.Tensor:
    from iclr25._guard import noise_sigma
    return noise_sigma(x)


def _weak_texture(x: torch.Tensor) -> torch.Tensor:
    # the candidate as committed (822e1f1), moved into the library after round 17 passed
    from iclr25._guard import weak_texture_sigma
    return weak_texture_sigma(x)


#: The σ estimators of ``--set sigma-sweep`` (Donoho's, main's, first).
SIGMA_ESTIMATORS = {"donoho": _donoho, "pca": sigma_pca, "weak-texture": _weak_texture,
                    "flat-blocks": sigma_flat_blocks}
#: The candidates (estimator, margin) of ``--set sigma-sweep``: margin None is main's fixed
#: 1 dB, (z, floor) h68r2r's SE pick; main (Donoho, 1 dB) first.
SIGMA_CANDIDATES = tuple((e, m) for e in SIGMA_ESTIMATORS for m in (None, R2R_SE_PICK))
#: The rule's pick on the development sets (``--set sigma-sweep`` at 822e1f1, 1,350 cases per
#: candidate, CPU 265 s, load 1.0-1.5; warned & worse / warned & better / quiet & worse /
#: quiet & better, agreement, returned worse): main (Donoho, 1 dB) 254 / 90 / 16 / 990, 92.1%,
#: 16; Donoho at the SE pick 93.7%, 8; PCA at 1 dB 93.5%, 2, at the SE pick 93.8%, 1;
#: flat blocks 76.8%, 5 and 79.0%, 1; **weak texture 270 / 174 / 0 / 906, 87.1%, 0** at
#: either margin (pooled alike, per set not), so the tie goes to the fixed 1 dB. σ̂/σ (the
#: noise clipped at 0 and 1 reads low at 35-50/255 for every estimator): round 16 at 10/255
#: Donoho 1.04 [0.96, 1.14], PCA 1.01 [0.97, 1.05], weak texture 0.93 [0.84, 0.96], flat
#: blocks 0.95 [0.82, 1.04]; rounds 3 and 4 at 15-20/255 weak texture 0.74-0.85 (mean), the
#: others 0.76-0.97. The weak-texture σ reads low, which makes the recorrupted estimate
#: conservative: no output returned worse, 84 more better outputs kept as the input.
SIGMA_PICK: tuple[str, tuple[float, float] | None] | None = ("weak-texture", None)
# Round 17 (run once at cc254a2 after the pick; 468 cases, CPU 130 s, load 0.8-1.4): the
# pick 204 / 44 / 0 / 220, **90.6%, none returned worse**; main 152 / 10 / 52 / 254, 86.8%,
# 52 returned worse (47 of them on the six textured scenes, where Donoho's σ̂ read 1.6× the
# truth at 5/255 on average, up to 2.57×; the pick 0.86× [0.40, 1.18]; at 15/255 1.10 and
# 0.90, at 30/255 0.97 and 0.91). **The merge condition holds**: the weak-texture σ is the
# recorrupted estimate's σ (``iclr25._guard._Inputs.sigma``), the margin stays 1 dB.


def sigma_confusion(recs: list[dict], cand: tuple[str, tuple[float, float] | None]
                    ) -> np.ndarray:
    """:func:`r2r_confusion` of the records of ``cand``'s estimator at its margin."""
    return r2r_confusion([r for r in recs if r["est"] == cand[0]], cand[1])


def _sigma_cand_name(c: tuple[str, tuple[float, float] | None]) -> str:
    return f"σ {c[0]}, {_cand_name(c[1])}"


def sigma_table(sets: dict[str, list[dict]], cands=SIGMA_CANDIDATES):
    """:func:`rule_table` of the σ candidates: ties to main, then the fixed 1 dB, then the
    order listed."""
    order = {c: i for i, c in enumerate(SIGMA_CANDIDATES)}
    return rule_table("noise σ", sets, cands, sigma_confusion, _sigma_cand_name,
                      lambda c: (order[c] > 0, c[1] is not None, order[c]))


def sigma_accuracy(sets: dict[str, list[dict]]) -> None:
    """Per set, noise level and estimator: the mean, least and greatest σ̂ / σ over the
    photos (one reading per photo and level)."""
    for n, recs in sets.items():
        for true in sorted({r["true"] for r in recs}):
            cells = []
            for est in SIGMA_ESTIMATORS:
                q = np.array(sorted({(r["case"], r["sigma"]) for r in recs
                                     if r["est"] == est and r["true"] == true}))[:, 1]
                q = q.astype(float) / true
                cells.append(f"{est} {q.mean():.2f} [{q.min():.2f}, {q.max():.2f}]")
            print(f"σ̂/σ, {n} at {true * 255:g}/255: " + "; ".join(cells))


def sigma_dev_sets(seed: int) -> dict[str, list[dict]]:
    """The development sets of ``--set sigma-sweep``: rounds 3 and 4 at 96 and 160 px and
    round 16, each as h68r2r built it, read by every estimator."""
    sets = {}
    for side in (96, 160):
        sets[f"round 3 {side}"] = noise_se_cases(new_photos(side), seed, NEW_NOISE,
                                                 new_noise_outputs,
                                                 estimators=SIGMA_ESTIMATORS)
        sets[f"round 4 {side}"] = noise_se_cases(round4_photos(side), seed + 1000,
                                                 ROUND4_NOISE, round4_noise_outputs,
                                                 estimators=SIGMA_ESTIMATORS)
    sets["round 16"] = noise_se_cases(round16_noise_photos(), seed + 79010, ROUND16_NOISE,
                                      round16_noise_outputs(round16_networks()), quantise=True,
                                      estimators=SIGMA_ESTIMATORS)
    return sets


def _returned_worse(recs: list[dict], cand) -> None:
    for r in recs:
        if r["est"] == cand[0] and r2r_kept(r, cand[1]) and r["ref"][0] < r["ref"][1]:
            print(f"  returned worse ({_sigma_cand_name(cand)}): {r['case']} / {r['out']}: "
                  f"reference {r['ref'][0]:.2f} vs {r['ref'][1]:.2f} dB, estimate "
                  f"{r['d']:+.2f} dB, SE {r['se']:.2f}, σ̂ {r['sigma'] * 255:.1f}/255")


def run_sigma_sweep(seed: int) -> None:
    """The σ candidates on :func:`sigma_dev_sets` by the rule above (:func:`sigma_table`),
    the σ-accuracy table and each returned-worse case of main and the pick."""
    sets = sigma_dev_sets(seed)
    sigma_accuracy(sets)
    pick = sigma_table(sets)
    for c in dict.fromkeys((SIGMA_CANDIDATES[0], pick)):
        for recs in sets.values():
            _returned_worse(recs, c)


#: Round 17's image sizes (h, w), 160-320 px with odd sides, one per scene (none of round
#: 16's).
ROUND17_SIZES = ((171, 229), (304, 228), (213, 167), (256, 320), (185, 277), (240, 240),
                 (317, 211), (223, 191), (168, 252), (209, 281), (263, 203), (199, 299))
#: Round 17's noise σ (5 and 15/255 used by no earlier noise round; 30/255 by round 4's
#: photos only).
ROUND17_NOISE = (5 / 255, 15 / 255, 30 / 255)


def round17_scene(seed: int, h: int, w: int, textured: bool) -> torch.Tensor:
    """:func:`round16_scene` of ``seed``, and where ``textured`` fine texture over the whole
    frame as foliage, fabric or gravel make it: white noise low-passed at 0.5-1 px, of
    strength 0.03-0.1 and a random tint, and 1-3 gratings of period 2.2-4 px."""
    from scipy.ndimage import gaussian_filter

    img = round16_scene(seed, h, w).numpy()
    if textured:
        r = np.random.default_rng(seed + 100000)
        tex = gaussian_filter(r.standard_normal((h, w)), r.uniform(0.5, 1.0))
        tint = r.uniform(0.6, 1.0, 3)
        img = img + r.uniform(0.03, 0.1) * (tex / tex.std())[None] * tint[:, None, None]
        rows, cols = np.arange(h)[:, None], np.arange(w)[None]
        for _ in range(r.integers(1, 4)):
            per, th = r.uniform(2.2, 4.0), r.uniform(0, math.pi)
            cy, cx, a, b = r.uniform(0, h), r.uniform(0, w), r.uniform(20, h / 2), r.uniform(
                20, w / 2)
            m = (abs(rows - cy) < a) & (abs(cols - cx) < b)
            gr = np.sin(2 * math.pi / per * (rows * math.sin(th) + cols * math.cos(th)))
            img = img + np.where(m, r.uniform(0.05, 0.15) * gr, 0)[None]
    return torch.from_numpy(np.round(np.clip(img, 0, 1) * 255) / 255)


def round17_noise_photos() -> dict[str, torch.Tensor]:
    """Round 17's clean scenes: :func:`round17_scene` of seeds 7941-7952 at
    :data:`ROUND17_SIZES`, the odd-numbered seeds textured."""
    return {f"s{7941 + i}{' textured' if i % 2 else ''}":
            round17_scene(7941 + i, h, w, bool(i % 2)) for i, (h, w) in enumerate(ROUND17_SIZES)}


def round17_noise_outputs(nets: dict[str, object]):
    """Round 17's outputs (settings not used before; :func:`noise_output_set`): NL-means at
    h = 0.8σ̂ (the library's) and 1.4σ̂; over-smoothing: Gaussian filters of σ 1.2 and 2.5
    px, TV of weights 0.04 and 0.15; a 3×3 median; near-ties: the input moved 15% towards
    NL-means, the input averaged 40/60 with a 1.8-px Gaussian, NL-means tone-shifted (0.95 ·
    x + 0.025), the input with more noise (σ 0.005, fixed draw); and ``nets``
    (:func:`round16_networks`)."""
    return noise_output_set(nets, nlm_h=1.4, gaussians=(1.2, 2.5), tvs=(0.04, 0.15),
                            bilateral=None, towards=(0.15,),
                            blend=("40% Gaussian 1.8", 0.4, 1.8), tone=(0.95, 0.025),
                            noisier=(31, 0.005))


def run_round17_noise(seed: int) -> None:
    """Round 17 (run once, after the pick is committed): the pick and main on
    :func:`round17_noise_photos` at :data:`ROUND17_NOISE` with :func:`round17_noise_outputs`;
    the merge condition above."""
    if SIGMA_PICK is None:
        raise SystemExit("round 17 runs after the development sweep's pick is committed")
    main_c = SIGMA_CANDIDATES[0]
    est = {e: SIGMA_ESTIMATORS[e] for e in dict.fromkeys((main_c[0], SIGMA_PICK[0]))}
    recs = noise_se_cases(round17_noise_photos(), seed + 79410, ROUND17_NOISE,
                          round17_noise_outputs(round16_networks()), quantise=True,
                          estimators=est)
    sets = {"round 17": recs}
    for true in ROUND17_NOISE:
        for e in est:
            q = np.array([r["sigma"] for r in recs if r["est"] == e and r["true"] == true
                          and r["out"] == "NL-means"]) / true
            print(f"σ̂/σ, round 17 at {true * 255:g}/255, {e}: mean {q.mean():.2f} "
                  f"[{q.min():.2f}, {q.max():.2f}]")
    sigma_table(sets, dict.fromkeys((main_c, SIGMA_PICK)))
    for c in dict.fromkeys((main_c, SIGMA_PICK)):
        _returned_worse(recs, c)
    t, m = sigma_confusion(recs, SIGMA_PICK), sigma_confusion(recs, main_c)
    a, am = np.trace(t) / t.sum(), np.trace(m) / m.sum()
    ok = (t[1, 0] < m[1, 0] or t[1, 0] == m[1, 0] == 0) and a >= am
    print(f"round 17: merge condition {'holds' if ok else 'fails'} (returned worse {t[1, 0]} "
          f"vs main's {m[1, 0]}, agreement {a:.1%} vs main's {am:.1%})")


def run_sigma_timing(seed: int) -> None:
    """The noise check's cost at 300 × 400 px (``guarded``, measure ``"r2r"``, ours and the
    classical result NL-means as ``restore`` runs it) with the weak-texture σ (today's) and
    with Donoho's (main's before h68sigma), timed alike (``_timing.compare``), and the two σ
    estimates alone. The input: :func:`round16_scene` of seed 7953 with σ 15/255 noise."""
    import warnings

    from _timing import compare

    import iclr25._guard as guard

    J = round16_scene(7953, 300, 400)
    g = torch.Generator().manual_seed(seed + 7953)
    y = (J + 15 / 255 * torch.randn(J.shape, generator=g, dtype=J.dtype)).clamp(0, 1)[None]
    y = (torch.round(y * 255) / 255).float()
    nlm = _nlm(0.8)
    ours = nlm(y)
    today = guard.weak_texture_sigma

    def check(sigma_of):
        def run():
            guard.weak_texture_sigma = sigma_of   # what _Inputs.sigma reads
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return guard.guarded(y, ours, nlm, {"NL-means": nlm}, measure="r2r",
                                         fallback="input")
            finally:
                guard.weak_texture_sigma = today
        return run
    a, b = compare(check(today), check(guard.noise_sigma), repeat=3)
    row(M, "noise check at 300x400: weak-texture σ vs Donoho's", a.cpu, b.cpu,
        peer_name="Donoho's σ", unit="s", wall=(a.wall, b.wall))
    a, b = compare(lambda: today(y), lambda: guard.noise_sigma(y), repeat=5)
    row(M, "σ estimate at 300x400: weak-texture vs Donoho", a.cpu, b.cpu,
        peer_name="Donoho's σ", unit="s", wall=(a.wall, b.wall))


# --- the SE margin on top of the weak-texture σ (issue 68, h68r2rse2) -------------------------
# The candidate, walk 13's report and round 18's merge condition were written down and
# committed before any of them ran on this branch.
#
# * Why: on h68sigma's sweep the weak-texture σ gave the same pooled counts at h68r2r's SE
#   margin and at the fixed 1 dB (0 returned worse, 87.1%), and the tie went to 1 dB. Walk 13
#   has 24 noise cases where DCPT's all-in-one network is +0.75-0.91 dB above its input by
#   the reference, SE 0.01-0.02 dB: 1 dB keeps all 24 inputs, the SE margin (about 0.54 dB
#   there) would return them. The SE margin failed round 16 only with Donoho's σ (2
#   returned worse, by the σ's bias, not the draw's spread), which main no longer uses.
# * Candidate (:data:`SE2_CANDIDATE`): the weak-texture σ (main's) with h68r2r's pick, ours
#   kept where its estimate beats the input's by 0.5 dB + 2 SE (:data:`R2R_SE_PICK`, not
#   re-tuned); main: the weak-texture σ with the fixed 1 dB. One candidate, no sweep.
# * Development, reported, deciding nothing (``--set walk13-noise --walk13 DIR``, run after
#   this commit and before round 18): walk 13's 24 noise cases (``dcpt/noise20`` and
#   ``noise35`` of its 12 scenes, its all-in-one network ``m/aio.safetensors``, the clean
#   scenes ``clean/``), by both.
# * Merge condition (round 18, ``--set round18-noise``, run once): :func:`round18_noise_photos`,
#   12 generated scenes (seeds 8101-8112, none used before; the even seeds finely
#   textured, :func:`round17_scene`) at :data:`ROUND18_SIZES` (160-320 px, odd sides), noise
#   σ 8, 20 and 40/255 written to 8 bits, :func:`round18_noise_outputs` (near-ties: mild
#   Gaussian, bilateral and NL-means, the input blended with NL-means at three weights;
#   over-smoothing Gaussian and TV; a short-trained DCPT all-in-one network as walk 13 made
#   it, and its noise fine-tune): the candidate returns no output worse than its input AND
#   agrees with the reference at least as often as main on the same cases. Only then does
#   the SE margin become the recorrupted estimate's default.

#: Main's noise check (the weak-texture σ at the fixed 1 dB) and the candidate (the same σ
#: at h68r2r's SE margin), as :data:`SIGMA_CANDIDATES` name them.
SE2_MAIN: tuple[str, tuple[float, float] | None] = ("weak-texture", None)
SE2_CANDIDATE: tuple[str, tuple[float, float] | None] = ("weak-texture", R2R_SE_PICK)
# Round 18 (run once at 97c4d00; 612 cases: 17 outputs × 12 scenes × 3 σ; CPU 127 s, load
# 2.0-3.0): main 168 / 77 / 0 / 367, 87.4%, none returned worse; **the candidate 168 / 53 / 0 /
# 391, 91.3%, none returned worse**. Near-ties (ours +0.3 to +1.5 dB by the reference): 56 of
# 85 returned (main 31). The all-in-one network (+0.80 dB by the reference on average,
# estimated +0.41, SE 0.02-0.22): 28 of 33 better outputs returned (main 5), its 3 worse ones
# kept as the input by both; its noise fine-tune the same at both (19 returned, 15 worse and
# 2 better kept). σ̂/σ (weak texture, NL-means' records): 8/255 0.72 [0.32, 0.96], 20/255
# 0.91 [0.76, 0.98], 40/255 0.88 [0.80, 0.93]. **The merge condition holds**: the SE margin
# is the recorrupted estimate's default (``iclr25._guard.MARGINS`` and ``R2R_SE_Z``).
#
# Walk 13 (``--set walk13-noise`` at 98ba3a8, development, 24 cases, CPU 7.9 s): the network
# +0.75 to +0.91 dB by the reference (mean +0.84), estimated +0.73 to +0.87 (mean +0.77), SE
# 0.014-0.025 dB, so the SE margin is 0.53-0.55 dB: main 0 / 24 / 0 / 0, 0.0% (every input
# kept); the candidate 0 / 0 / 0 / 24, 100%, none returned worse.

#: Walk 13's noise folders and their σ (its PLAN.md).
WALK13_NOISE = {"noise20": 20 / 255, "noise35": 35 / 255}
#: Round 18's image sizes (h, w), 160-320 px with odd sides, one per scene.
ROUND18_SIZES = ((177, 243), (320, 256), (205, 163), (248, 312), (161, 289), (232, 232),
                 (299, 219), (219, 187), (176, 264), (203, 271), (271, 209), (191, 305))
#: Round 18's noise σ (8/255 used by no earlier noise round; 20/255 by round 4 and walk 13,
#: 40/255 by none).
ROUND18_NOISE = (8 / 255, 20 / 255, 40 / 255)


def _read_png(path) -> torch.Tensor:
    from PIL import Image
    a = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64) / 255
    return torch.from_numpy(a).permute(2, 0, 1).contiguous()


def se2_report(label: str, recs: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Main's and the candidate's counts on ``recs`` (:func:`sigma_table`), each output
    returned worse, the near-ties' (ours above the input by 0.3-1.5 dB by the reference)
    and each network's counts; returns the candidate's and main's 2×2 tables."""
    sigma_table({label: recs}, (SE2_MAIN, SE2_CANDIDATE))
    for c in (SE2_MAIN, SE2_CANDIDATE):
        _returned_worse(recs, c)
        mine = [r for r in recs if r["est"] == c[0]]
        near = [r for r in mine if 0.3 <= r["ref"][0] - r["ref"][1] <= 1.5]
        print(f"  {_sigma_cand_name(c)}, near-ties (+0.3 to +1.5 dB by the reference): "
              f"{sum(r2r_kept(r, c[1]) for r in near)} of {len(near)} returned")
        for net in dict.fromkeys(r["out"] for r in mine if r["out"].startswith("DCPT")):
            rs = [r for r in mine if r["out"] == net]
            print(f"  {_sigma_cand_name(c)}, {net}: {_counts(r2r_confusion(rs, c[1]))}; mean "
                  f"gain by the reference {np.mean([r['ref'][0] - r['ref'][1] for r in rs]):+.2f}"
                  f" dB, estimated {np.nanmean([r['d'] for r in rs]):+.2f} dB, SE "
                  f"{min(r['se'] for r in rs):.2f}-{max(r['se'] for r in rs):.2f}")
    return sigma_confusion(recs, SE2_CANDIDATE), sigma_confusion(recs, SE2_MAIN)


def run_walk13_noise(folder) -> None:
    """Walk 13's 24 noise cases (development; :data:`WALK13_NOISE`): its all-in-one network's
    output of each noisy file, by main and the candidate (:func:`se2_report`), one line per
    case."""
    from pathlib import Path

    from iclr25._guard import weak_texture_sigma
    from iclr25.dcpt.io import load

    root = Path(folder)
    outs = {"DCPT all-in-one": net_restorer(load(root / "m" / "aio.safetensors").model)}
    recs = []
    for tag, sigma in WALK13_NOISE.items():
        for f in sorted((root / "dcpt" / tag).glob("*.png")):
            y, J = _read_png(f), _read_png(root / "clean" / f.name)
            recs += se_records(f"walk 13 {tag} {f.stem} {J.shape[1]}x{J.shape[2]}", y, J, outs,
                               {"weak-texture": weak_texture_sigma}, sigma)
    for r in recs:
        z, floor = R2R_SE_PICK
        print(f"  {r['case']}: reference {r['ref'][0] - r['ref'][1]:+.2f} dB, estimate "
              f"{r['d']:+.2f} dB, SE {r['se']:.3f}, SE margin {floor + z * r['se']:.2f} dB; "
              f"returned by main {r2r_kept(r, None)}, candidate {r2r_kept(r, R2R_SE_PICK)}")
    se2_report("walk 13", recs)


def round18_noise_photos() -> dict[str, torch.Tensor]:
    """Round 18's clean scenes: :func:`round17_scene` of seeds 8101-8112 at
    :data:`ROUND18_SIZES`, the even seeds (8102, 8104, ..., 8112) textured."""
    return {f"s{8101 + i}{' textured' if i % 2 else ''}":
            round17_scene(8101 + i, h, w, bool(i % 2)) for i, (h, w) in enumerate(ROUND18_SIZES)}


def round18_networks() -> dict[str, object]:
    """A short-trained DCPT all-in-one network as walk 13 made it (pre-trained and fine-tuned
    on noise, blur, motion blur, defocus and JPEG, the CLI's step counts) and the noise
    fine-tune of the same pre-training (:func:`short_dcpt`)."""
    kinds = ("noise", "blur", "motion_blur", "defocus", "jpeg")
    return short_dcpt(kinds, {"DCPT all-in-one": kinds, "DCPT noise": ("noise",)})


def round18_noise_outputs(nets: dict[str, object]):
    """Round 18's outputs (:func:`noise_output_set`): NL-means at h = 0.8σ̂ (the library's) and
    0.3σ̂ (mild); Gaussian filters of σ 0.5 and 0.9 px (mild) and 3.5 px (over-smoothing); TV
    of weights 0.02 (mild) and 0.25 (over-smoothing); a mild bilateral filter (σ_colour 0.05,
    σ_space 1.5); a 3×3 median; the input moved 20%, 45% and 70% towards NL-means; the input
    averaged 70/30 with a 1.2-px Gaussian; NL-means tone-shifted (0.98 · x + 0.01); the input
    with more noise (σ 0.004, fixed draw); and ``nets`` (:func:`round18_networks`)."""
    return noise_output_set(nets, nlm_h=0.3, gaussians=(0.5, 0.9, 3.5), tvs=(0.02, 0.25),
                            bilateral=(0.05, 1.5), towards=(0.2, 0.45, 0.7),
                            blend=("30% Gaussian 1.2", 0.3, 1.2), tone=(0.98, 0.01),
                            noisier=(37, 0.004))


def run_round18_noise(seed: int) -> None:
    """Round 18 (run once): main and the candidate on :func:`round18_noise_photos` at
    :data:`ROUND18_NOISE` with :func:`round18_noise_outputs`; the merge condition above."""
    from iclr25._guard import weak_texture_sigma

    recs = noise_se_cases(round18_noise_photos(), seed + 81010, ROUND18_NOISE,
                          round18_noise_outputs(round18_networks()), quantise=True,
                          estimators={"weak-texture": weak_texture_sigma})
    for true in ROUND18_NOISE:
        q = np.array([r["sigma"] for r in recs if r["true"] == true
                      and r["out"] == "NL-means"]) / true
        print(f"σ̂/σ, round 18 at {true * 255:g}/255: mean {q.mean():.2f} "
              f"[{q.min():.2f}, {q.max():.2f}]")
    t, m = se2_report("round 18", recs)
    a, am = np.trace(t) / t.sum(), np.trace(m) / m.sum()
    ok = t[1, 0] == 0 and a >= am
    print(f"round 18: merge condition {'holds' if ok else 'fails'} (returned worse {t[1, 0]} "
          f"vs main's {m[1, 0]}, agreement {a:.1%} vs main's {am:.1%})")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="96-px photos, 30 training steps")
    p.add_argument("--side", type=int, default=None)
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--set", choices=("all", "blur", "lowlight-old", "lowlight-fresh", "new",
                                           "new-blur", "round4", "round5", "round6",
                                           "round7-defocus", "round7-lowlight",
                                           "round8-lowlight", "round9-lowlight",
                                           "round9-blur", "defaults-sweep",
                                           "round10-blur", "blur11-sweep",
                                           "round11-blur", "lowkey-candidates",
                                           "lowlight-margins", "round13-lowlight",
                                           "lowkey-spatial", "round14-lowlight",
                                           "lowlight-key-range", "round15-lowlight",
                                           "jpeg-dev", "jpeg-heldout", "jpeg-heldout-b",
                                           "jpeg-lx-dev", "jpeg-heldout-c",
                                           "motion-dev", "round12-motion",
                                           "r2r-se-sweep", "round16-noise",
                                           "sigma-sweep", "round17-noise", "sigma-timing",
                                           "walk13-noise", "round18-noise"),
                   default="all", help="which cases to run (default all; new: round 3's "
                   "held-out set at the default margin, not part of all)")
    p.add_argument("--walk13", default=None,
                   help="walk 13's folder (its dcpt/, clean/ and m/), for --set walk13-noise")
    a = p.parse_args(argv)
    if a.set == "walk13-noise" and a.walk13 is None:
        p.error("--set walk13-noise needs --walk13 DIR")
    torch.set_num_threads(1)
    side = a.side or (96 if a.quick else 160)
    steps = a.steps or (30 if a.quick else 150)
    t0 = time.process_time()
    single = {"new": lambda: run_new(side, steps, a.seed),
              "round4": lambda: run_round4(side, a.seed),
              "new-blur": lambda: run_round3_blur(side),
              "round5": lambda: run_round5(side),
              "round6": lambda: (run_round6_blur(side),
                                 run_round6_lowlight(side, steps, a.seed)),
              "round7-defocus": lambda: run_round7_defocus(side),
              "round7-lowlight": lambda: run_round7_lowlight(side, steps, a.seed),
              "round8-lowlight": lambda: run_round8_lowlight(side, steps, a.seed),
              "round9-lowlight": lambda: run_round9_lowlight(side, steps, a.seed),
              "round9-blur": lambda: run_round9_blur(side),
              "defaults-sweep": lambda: run_defaults_sweep(side),
              "round10-blur": lambda: run_round10_blur(side),
              "blur11-sweep": lambda: run_blur11_sweep(side),
              "round11-blur": lambda: run_round11_blur(side),
              "lowkey-candidates": lambda: run_lowkey_candidates(side, steps, a.seed),
              "lowlight-margins": lambda: run_lowlight_margins(side, steps, a.seed),
              "round13-lowlight": lambda: run_round13_lowlight(side, steps, a.seed),
              "lowkey-spatial": lambda: run_lowkey_spatial(side, steps, a.seed),
              "round14-lowlight": lambda: run_round14_lowlight(side, steps, a.seed),
              "lowlight-key-range": lambda: run_key_range(side, steps, a.seed),
              "round15-lowlight": lambda: run_round15_lowlight(side, steps, a.seed),
              "jpeg-dev": run_jpeg_dev, "jpeg-heldout": run_jpeg_heldout,
              "jpeg-heldout-b": run_jpeg_heldout_b,
              "jpeg-lx-dev": run_jpeg_lx_dev, "jpeg-heldout-c": run_jpeg_heldout_c,
              "motion-dev": lambda: run_motion_dev(side),
              "round12-motion": lambda: run_round12_motion(side),
              "r2r-se-sweep": lambda: run_r2r_se_sweep(a.seed),
              "round16-noise": lambda: run_round16_noise(a.seed),
              "sigma-sweep": lambda: run_sigma_sweep(a.seed),
              "round17-noise": lambda: run_round17_noise(a.seed),
              "sigma-timing": lambda: run_sigma_timing(a.seed),
              "walk13-noise": lambda: run_walk13_noise(a.walk13),
              "round18-noise": lambda: run_round18_noise(a.seed)}
    if a.set in single:
        single[a.set]()
    if a.set in ("all", "blur", "lowlight-old"):
        clean = photos(side)
    if a.set in ("all", "blur"):
        blur = blur_cases(clean)
        for fam in ("blur", "defocus"):
            report(fam, [r for r in blur if f" {fam} " in r["case"]])
    ll = ("new", "prev", "old")
    if a.set in ("all", "lowlight-old"):
        recs = lowlight_cases(clean, steps, a.seed)
        report("low light", recs, ll)
        colour_report("low light", recs)
    if a.set in ("all", "lowlight-fresh"):
        recs = lowlight_cases(fresh_photos(side), steps, a.seed, fresh=True)
        report("low light, fresh set", recs, ll)
        colour_report("low light, fresh set", recs)
    print(f"CPU {time.process_time() - t0:.1f} s; photos at {side}x{side * 3 // 4}")


if __name__ == "__main__":
    main(sys.argv[1:])

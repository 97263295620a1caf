class LoCoDLClassifier: pass

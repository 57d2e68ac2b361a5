# source: https://github.com/open-lm-engine/lm-engine/pull/253
# did: computed the teacher's soft targets under inference_mode in the distillation step and fed them to the student's KL loss
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: no
import torch
import torch.nn.functional as F
from torch import nn


class DistillationTrainer:
    def __init__(self, student, teacher, temperature=2.0, alpha=0.5):
        self.student = student
        self.teacher = teacher.eval()
        self.temperature = temperature
        self.alpha = alpha
        self.optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3)

    def _teacher_probs(self, input_ids):
        with torch.inference_mode():
            logits = self.teacher(input_ids)
            return F.softmax(logits / self.temperature, dim=-1)

    def train_step(self, input_ids, labels):
        student_logits = self.student(input_ids)
        teacher_probs = self._teacher_probs(input_ids)
        student_log_probs = F.log_softmax(student_logits / self.temperature, dim=-1)
        kd_loss = F.kl_div(student_log_probs, teacher_probs, reduction="batchmean")  # expect: GL203
        ce_loss = F.cross_entropy(student_logits, labels)
        loss = self.alpha * kd_loss * self.temperature**2 + (1 - self.alpha) * ce_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Embedding(20, 16), nn.Flatten(), nn.Linear(64, 5))
    student = nn.Sequential(nn.Embedding(20, 4), nn.Flatten(), nn.Linear(16, 5))
    trainer = DistillationTrainer(student, teacher)
    tokens, labels = torch.randint(0, 20, (8, 4)), torch.randint(0, 5, (8,))
    print("loss", round(trainer.train_step(tokens, labels), 4))

// Python-free kernel: recursive privacy-preserving Fisher information (Algorithm 1), CRLB
// (Algorithm 2) and private RLS (Algorithm 3) of Ke, Wang & Zhang,
// "Privacy-Preserving Cramer-Rao Lower Bound" (seed 002, Sections 3.3-3.4).
//
// One state object runs the three recursions. Python validates every input
// (shapes, symmetry, PSD, U_k = U_k S_k^+ S_k); here only dimensions are
// re-checked so that a bad call throws instead of reading out of bounds.
//
// Storage. Only S_Delta,k = (Sbar_k + Sigmabar_w,k^{-1})^{-1} is kept: B_k is
// never formed, because B_k = Sigmabar_w,k^{-1} S_Delta,k (proof of Theorem 22),
// so Gamma_k's top block B_{k-1} U_k S_k^+ is Sigmabar_w^{-1} times Psi_k's.
// While every U_k is zero, S_Delta,k is block diagonal and only its diagonal
// blocks are kept (O(1) work per step, Remark 23). The first non-zero U_k turns
// it into a dense symmetric matrix, of which only the lower triangle is updated
// (one symmetric matrix-vector product and one rank-m update per step, O(k^2)).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace sharpdp {
namespace kernels {

using Eigen::Index;
using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;
using RMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using CMapR = Eigen::Map<const RMat>;
using CMapV = Eigen::Map<const Vec>;

inline void require(bool ok, const std::string& msg) {
  if (!ok) throw std::invalid_argument(msg);
}

// Moore-Penrose inverse of a symmetric PSD matrix via Eigen's eigensolver.
inline Mat psd_pinv(const Mat& S) {
  Eigen::SelfAdjointEigenSolver<Mat> es(S);
  const Vec& ev = es.eigenvalues();
  const double tol = static_cast<double>(S.rows()) * 1e-13 * std::max(ev.cwiseAbs().maxCoeff(), 1e-300);
  Vec inv(ev.size());
  for (Index i = 0; i < ev.size(); ++i) inv(i) = ev(i) > tol ? 1.0 / ev(i) : 0.0;
  return es.eigenvectors() * inv.asDiagonal() * es.eigenvectors().transpose();
}

class PPState {
 public:
  PPState(Index n, bool track_crlb, double rcond)
      : n_(n), track_(track_crlb), rcond_(rcond), PI_(Mat::Zero(n, n)) {
    require(n >= 1, "n must be >= 1");
  }

  // One step of Algorithm 1 (and Algorithm 2 when tracking the bound).
  // U has shape (M_{k-1}, m) or is empty (meaning U_k = 0).
  void update(const CMapR& H, const CMapR& Sw, const CMapR& S, const CMapR* U) {
    const Index m = H.rows();
    require(H.cols() == n_, "H_k must have n columns");
    require(Sw.rows() == m && Sw.cols() == m, "Sigma_w_k must be (m, m)");
    require(S.rows() == m && S.cols() == m, "S_k must be (m, m)");
    const bool zero_u = (U == nullptr) || (U->size() == 0);
    if (!zero_u) require(U->rows() == M_ && U->cols() == m, "U_k must be (M_{k-1}, m)");
    if (zero_u) {
      if (dense_) {
        step_dense(H, Sw, S, nullptr);
      } else if (m == 1) {
        step_scalar_zero(H, Sw(0, 0), S(0, 0));
      } else {
        step_blocks(H, Sw, S);
      }
    } else {
      if (!dense_) densify();
      step_dense(H, Sw, S, U);
    }
  }

  // Algorithm 3: one step of the sequential Gaussian mechanism and RLS. d is
  // the privacy noise d_k ~ N(0, S_k) drawn by the caller. Returns z_k.
  Vec rls_update(const CMapV& y, const CMapR& H, const CMapR& Sw, const CMapR& S, const CMapR* U,
                 const CMapV& d) {
    const Index m = H.rows();
    require(y.size() == m && d.size() == m, "y_k and d_k must have length m");
    require(track_, "internal: RLS needs the CRLB recursion");
    const bool zero_u = (U == nullptr) || (U->size() == 0);
    Vec z = S * y + d;
    if (!zero_u) {
      require(U->rows() == M_ && U->cols() == m, "U_k must be (M_{k-1}, m)");
      z.noalias() += U->transpose() * Eigen::Map<const Vec>(Ybar_.data(), M_);
    }
    const Index Mprev = M_;
    update(H, Sw, S, U);
    // zeta_k = [zeta_{k-1}; 0] + Phi_k z_k, Phi_k = [U_k S_k^+; I].
    if (!zero_u) Eigen::Map<Vec>(zeta_.data(), Mprev).noalias() += Ut_ * z;
    zeta_.insert(zeta_.end(), z.data(), z.data() + m);
    Ybar_.insert(Ybar_.end(), y.data(), y.data() + m);
    if (k0_ == k_) {
      // theta_{k0} = Sigma_{k0} Hbar^T B_{k0} zeta_{k0}
      const Vec Bz = apply_B(Eigen::Map<const Vec>(zeta_.data(), M_));
      theta_ = Sigma_ * (hbar().transpose() * Bz);
    } else if (k0_ >= 0 && k_ > k0_) {
      // Psi_k^T zeta_k with Psi_k = [S_Delta,k-1 U_k S_k^+; Sigma_w,k].
      Vec psi_zeta = Sw * z;
      if (!zero_u) psi_zeta.noalias() += Pt_.transpose() * Eigen::Map<const Vec>(zeta_.data(), Mprev);
      const Vec innov = z - Lam_ * psi_zeta - Lam_ * (G_.transpose() * theta_);
      theta_ += Sigma_ * (G_ * innov);
    }
    return z;
  }

  // U_k = 0 for a whole batch (Remark 23): H (K, m, n), Sw and S (K, m, m).
  void update_zero_u_batch(const double* H, const double* Sw, const double* S, Index K, Index m) {
    for (Index k = 0; k < K; ++k) {
      const CMapR Hk(H + k * m * n_, m, n_), Swk(Sw + k * m * m, m, m), Sk(S + k * m * m, m, m);
      update(Hk, Swk, Sk, nullptr);
    }
  }

  // Set (with the GIL held) while a batch runs without the GIL, so that other
  // Python threads cannot mutate the object meanwhile.
  bool busy = false;
  void check_idle() const {
    if (busy) throw std::invalid_argument("this object is being updated by another thread");
  }

  Index n() const { return n_; }
  Index k() const { return k_; }
  Index M() const { return M_; }
  Index k0() const { return k0_; }
  const Mat& fisher() const { return PI_; }
  // Algorithm 2's bound and Algorithm 3's estimate exist from step k0 on.
  bool has_crlb() const { return k0_ >= 0; }
  const Mat& covariance() const { return Sigma_; }
  const Vec& estimate() const { return theta_; }
  Mat SD_dense() const {
    if (!dense_) return blocks_to_dense(SDblk_);
    return Mat(SDd_.topLeftCorner(M_, M_).selfadjointView<Eigen::Lower>());
  }
  bool dense() const { return dense_; }

 private:
  // --- storage helpers -------------------------------------------------------
  Eigen::Map<const RMat> hbar() const { return Eigen::Map<const RMat>(Hrows_.data(), M_, n_); }

  Mat blocks_to_dense(const std::vector<double>& blk) const {
    Mat out = Mat::Zero(M_, M_);
    std::size_t pos = 0;
    for (std::size_t i = 0; i < bm_.size(); ++i) {
      const Index m = bm_[i];
      out.block(boff_[i], boff_[i], m, m) = Eigen::Map<const Mat>(blk.data() + pos, m, m);
      pos += static_cast<std::size_t>(m * m);
    }
    return out;
  }

  // Sigmabar_w^{-1} applied block by block to the rows of X (in place).
  template <typename Derived>
  void apply_sw_inv(Eigen::MatrixBase<Derived>& X) const {
    std::size_t pos = 0;
    for (std::size_t i = 0; i < bm_.size(); ++i) {
      const Index m = bm_[i];
      X.middleRows(boff_[i], m) = Eigen::Map<const Mat>(SwInv_.data() + pos, m, m) * X.middleRows(boff_[i], m);
      pos += static_cast<std::size_t>(m * m);
    }
  }

  // B_k v = Sigmabar_w^{-1} S_Delta,k v.
  Vec apply_B(const Eigen::Map<const Vec>& v) const {
    Vec out(M_);
    if (dense_) {
      out.noalias() = SDd_.topLeftCorner(M_, M_).selfadjointView<Eigen::Lower>() * v;
    } else {
      std::size_t pos = 0;
      for (std::size_t i = 0; i < bm_.size(); ++i) {
        const Index m = bm_[i];
        out.segment(boff_[i], m) = Eigen::Map<const Mat>(SDblk_.data() + pos, m, m) * v.segment(boff_[i], m);
        pos += static_cast<std::size_t>(m * m);
      }
    }
    apply_sw_inv(out);
    return out;
  }

  void reserve_dense(Index need) {
    if (need <= cap_) return;
    Index cap = std::max<Index>(need, 2 * cap_);
    Mat S2 = Mat::Zero(cap, cap);
    S2.topLeftCorner(M_, M_) = SDd_.topLeftCorner(M_, M_);
    SDd_.swap(S2);
    cap_ = cap;
  }

  void densify() {
    cap_ = 0;
    SDd_.resize(0, 0);
    const Index M = M_;
    M_ = 0;
    reserve_dense(std::max<Index>(M + 8, 16));
    M_ = M;
    SDd_.topLeftCorner(M_, M_) = blocks_to_dense(SDblk_);
    dense_ = true;
    std::vector<double>().swap(SDblk_);
  }

  // Append the diagonal blocks of step k: Sigma_w,k^{-1} (always) and, in block
  // mode, S_Delta's block Sw - Sw Lam Sw.
  void push_block(const CMapR& Sw, Index m) {
    const std::size_t pos = SwInv_.size();
    SwInv_.resize(pos + static_cast<std::size_t>(m * m));
    Eigen::Map<Mat>(SwInv_.data() + pos, m, m) = Mat(Sw).llt().solve(Mat::Identity(m, m));
    bm_.push_back(m);
    boff_.push_back(M_);
  }

  // Lam = S (I + P S)^{-1} = (I + S P)^{-1} S (symmetric by Lemma A.2).
  void compute_lambda(const CMapR& S, const Mat& P) {
    const Index m = S.rows();
    work_.noalias() = S * P;
    work_ += Mat::Identity(m, m);
    lu_.compute(work_);
    Lam_ = lu_.solve(Mat(S));
    Lam_ = 0.5 * (Lam_ + Lam_.transpose()).eval();
  }

  void finish_step(const CMapR& H, const CMapR& S) {
    const Index m = H.rows();
    // PI_k = PI_{k-1} + G_k Lam_k G_k^T
    GL_.noalias() = G_ * Lam_;
    PI_.noalias() += GL_ * G_.transpose();
    PI_ = 0.5 * (PI_ + PI_.transpose()).eval();
    Hrows_.insert(Hrows_.end(), H.data(), H.data() + m * n_);
    M_ += m;
    ++k_;
    if (!track_) return;
    if (k0_ >= 0) {
      // Algorithm 2: Sigma_k = Sigma_{k-1} - Sigma G S Xi^{-1} G^T Sigma with
      // S Xi^{-1} = (I + S Q)^{-1} S, Q = Phi^T S_Sigma Phi + G^T Sigma G.
      SG_.noalias() = Sigma_ * G_;
      Q_ = P_;
      Q_.noalias() += G_.transpose() * SG_;
      work_.noalias() = S * Q_;
      work_ += Mat::Identity(m, m);
      lu_.compute(work_);
      Kx_ = lu_.solve(Mat(S));
      SGK_.noalias() = SG_ * Kx_;
      Sigma_.noalias() -= SGK_ * SG_.transpose();
      Sigma_ = 0.5 * (Sigma_ + Sigma_.transpose()).eval();
    } else {
      try_start_crlb();
    }
  }

  // Algorithm 2's initialisation: Sigma_k0 = PI_k0^{-1} at the first k with
  // PI_k invertible (smallest/largest eigenvalue above rcond).
  void try_start_crlb() {
    Eigen::SelfAdjointEigenSolver<Mat> es(PI_, Eigen::EigenvaluesOnly);
    const double lo = es.eigenvalues()(0), hi = es.eigenvalues()(n_ - 1);
    if (hi > 0.0 && lo > rcond_ * hi) {
      Eigen::LLT<Mat> llt(PI_);
      Sigma_ = llt.solve(Mat::Identity(n_, n_));
      Sigma_ = 0.5 * (Sigma_ + Sigma_.transpose()).eval();
      k0_ = k_;
      theta_ = Vec::Zero(n_);
    }
  }

  // U_k = 0, one scalar measurement, block storage: the allocation-free O(n^2)
  // step of Remark 23. Rank-one updates are written as u u^T so that PI and
  // Sigma stay exactly symmetric.
  void step_scalar_zero(const CMapR& H, double sw, double s) {
    const Eigen::Map<const Vec> h(H.data(), n_);
    const double lam = s / (1.0 + s * sw);  // Lambda_k = S (I + Sigma_w S)^{-1}
    P_.setConstant(1, 1, sw);
    Lam_.setConstant(1, 1, lam);
    G_ = h;
    Ut_.resize(0, 1);
    SDblk_.push_back(sw - sw * lam * sw);
    SwInv_.push_back(1.0 / sw);
    bm_.push_back(1);
    boff_.push_back(M_);
    u_.noalias() = std::sqrt(lam) * h;
    PI_.noalias() += u_ * u_.transpose();
    Hrows_.insert(Hrows_.end(), H.data(), H.data() + n_);
    M_ += 1;
    ++k_;
    if (!track_) return;
    if (k0_ >= 0) {
      u_.noalias() = Sigma_ * h;
      const double q = sw + h.dot(u_);
      u_ *= std::sqrt(s / (1.0 + s * q));
      Sigma_.noalias() -= u_ * u_.transpose();
    } else {
      try_start_crlb();
    }
  }

  // U_k = 0 with block-diagonal storage: O(m^3 + n^2 m) per step.
  void step_blocks(const CMapR& H, const CMapR& Sw, const CMapR& S) {
    const Index m = H.rows();
    P_ = Sw;
    compute_lambda(S, P_);
    G_ = H.transpose();
    tmp_.noalias() = Lam_ * Sw;
    const std::size_t pos = SDblk_.size();
    SDblk_.resize(pos + static_cast<std::size_t>(m * m));
    Eigen::Map<Mat> Sb(SDblk_.data() + pos, m, m);
    Sb = Sw;
    Sb.noalias() -= Sw * tmp_;  // S_Delta block: Sw - Sw Lam Sw
    push_block(Sw, m);
    Ut_.resize(0, m);
    finish_step(H, S);
  }

  // General step of Algorithm 1 on the dense lower triangle of S_Delta,k-1.
  void step_dense(const CMapR& H, const CMapR& Sw, const CMapR& S, const CMapR* U) {
    const Index m = H.rows();
    const Index M = M_;
    reserve_dense(M + m);
    auto SD = SDd_.topLeftCorner(M, M);
    if (U != nullptr) {
      Ut_.noalias() = (*U) * psd_pinv(Mat(S));                            // Phi_k top block U_k S_k^+
      Pt_.resize(M, m);
      if (m == 1) {  // matrix-vector kernel (symv) for scalar measurements
        Pt_.col(0).noalias() = SD.selfadjointView<Eigen::Lower>() * Ut_.col(0);
      } else {
        Pt_.noalias() = SD.selfadjointView<Eigen::Lower>() * Ut_;  // Psi_k top block
      }
      Gt_ = Pt_;
      apply_sw_inv(Gt_);                                                  // Gamma_k top block
      P_ = Sw;
      P_.noalias() += Ut_.transpose() * Pt_;  // Phi^T S_Sigma Phi
    } else {
      Pt_ = Mat::Zero(M, m);
      P_ = Sw;
    }
    compute_lambda(S, P_);
    G_ = H.transpose();
    if (M > 0 && U != nullptr) G_.noalias() += hbar().transpose() * Gt_;
    // S_Delta,k = S_Sigma - Psi Lam Psi^T with Psi = [Pt; Sw] (lower triangle only)
    if (U != nullptr) {
      Eigen::SelfAdjointEigenSolver<Mat> es(Lam_);
      const Mat root = es.eigenvectors() * es.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal();
      const Mat X = Pt_ * root;
      if (m == 1) {
        SD.selfadjointView<Eigen::Lower>().rankUpdate(X.col(0), -1.0);
      } else {
        SD.selfadjointView<Eigen::Lower>().rankUpdate(X, -1.0);
      }
    }
    const Mat LSw = Lam_ * Sw;
    SDd_.block(M, 0, m, M).noalias() = -LSw.transpose() * Pt_.transpose();
    SDd_.block(M, M, m, m) = Sw;
    SDd_.block(M, M, m, m).noalias() -= Sw * LSw;
    push_block(Sw, m);
    if (U == nullptr) Ut_.resize(0, m);
    finish_step(H, S);
  }

  Index n_;
  bool track_;
  double rcond_;
  Index k_ = 0, M_ = 0, k0_ = -1, cap_ = 0;
  bool dense_ = false;
  Mat PI_, Sigma_;
  Vec theta_;
  std::vector<double> Hrows_, Ybar_, zeta_;
  std::vector<double> SDblk_, SwInv_;
  std::vector<Index> bm_, boff_;
  Mat SDd_;  // lower triangle of S_Delta,k in dense mode
  // Quantities of the latest step (Algorithm 1 notation).
  Mat Ut_, Gt_, Pt_, P_, Lam_, G_;
  // Workspace.
  Mat work_, tmp_, GL_, SG_, Q_, Kx_, SGK_;
  Vec u_;
  Eigen::PartialPivLU<Mat> lu_;
};

}  // namespace kernels
}  // namespace sharpdp
